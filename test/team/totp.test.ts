import { describe, expect, it } from 'vitest';
import {
  base32Decode,
  base32Encode,
  hashRecoveryCode,
  hotp,
  matchingStep,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  totpCode,
  totpStep,
} from '../../src/team/totp.js';

/** RFC 6238 appendix B, SHA-1 rows: the seed is the ASCII text "12345678901234567890". */
const RFC_6238_SHA1: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP', () => {
  const seed = Buffer.from('12345678901234567890', 'ascii');

  it.each(RFC_6238_SHA1)('computes the RFC 6238 code at %i s', (seconds, code) => {
    expect(hotp(seed, totpStep(seconds * 1000), 8)).toBe(code);
    expect(totpCode(seed, seconds * 1000)).toBe(code.slice(2));
  });

  it('reads back the base32 it writes, as authenticator apps take it', () => {
    expect(base32Encode(seed)).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(base32Decode('gezd gnbv gy3t qojq gezd gnbv gy3t qojq')).toEqual(seed);
    expect(base32Decode('GEZ1')).toBeUndefined();
    const secret = newTotpSecret();
    expect(base32Encode(base32Decode(secret) as Buffer)).toBe(secret);
    expect(otpauthUri('Vigil', 'a@example.com', secret)).toBe(
      `otpauth://totp/Vigil%3Aa%40example.com?secret=${secret}&issuer=Vigil&algorithm=SHA1&digits=6&period=30`,
    );
  });

  it('accepts a code one step early or late, and no further', () => {
    const secret = base32Encode(seed);
    const at = 1111111111 * 1000;
    const step = totpStep(at);
    for (const offset of [-1, 0, 1]) expect(matchingStep(secret, hotp(seed, step + offset), at)).toBe(step + offset);
    for (const offset of [-2, 2]) expect(matchingStep(secret, hotp(seed, step + offset), at)).toBeUndefined();
    expect(matchingStep(secret, 'abcdef', at)).toBeUndefined();
  });

  it('makes ten distinct recovery codes whose hash ignores case and separators', () => {
    const codes = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const first = codes[0] as string;
    expect(hashRecoveryCode(first.toUpperCase().replace('-', ' '))).toBe(hashRecoveryCode(first));
    expect(hashRecoveryCode(first)).toMatch(/^[0-9a-f]{64}$/);
  });
});
