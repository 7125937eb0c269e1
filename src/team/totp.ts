import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Time-based one-time passwords as authenticator apps compute them (RFC 6238 over RFC 4226):
 * HMAC-SHA-1, 30-second steps, 6 digits. A code is accepted in its own step and the steps on
 * either side, so a clock a little off still works.
 */
export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted on either side of the current one. */
const WINDOW = 1;
/** 160-bit secrets, the HMAC-SHA-1 block the RFC recommends. */
const SECRET_BYTES = 20;

export const RECOVERY_CODE_COUNT = 10;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding: how authenticator apps take secrets. */
export function base32Encode(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** The bytes of a base32 text (case, spaces and padding ignored); undefined when it holds another character. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.toUpperCase().replace(/[\s=]/g, '');
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) return undefined;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The HOTP value of `counter` (RFC 4226: dynamic truncation, then the last `digits` decimal digits). */
export function hotp(key: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The time step of an instant (milliseconds since the epoch). */
export const totpStep = (atMs: number): number => Math.floor(atMs / 1000 / TOTP_STEP_SECONDS);

/** The code of the step holding `atMs`. */
export const totpCode = (key: Buffer, atMs: number, digits = TOTP_DIGITS): string => hotp(key, totpStep(atMs), digits);

/**
 * The step whose code this is, within the window around `atMs`; undefined when none matches.
 * The caller still records the step (MemberStore.acceptTotpStep) so that a code works once.
 */
export function matchingStep(secret: string, code: string, atMs: number): number | undefined {
  const key = base32Decode(secret);
  const presented = code.replace(/\s/g, '');
  if (key === undefined || !/^\d{6}$/.test(presented)) return undefined;
  const now = totpStep(atMs);
  let found: number | undefined;
  // Every step of the window is compared, in constant time, whichever matches.
  for (let step = now - WINDOW; step <= now + WINDOW; step++)
    if (timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(presented)) && found === undefined) found = step;
  return found;
}

/** A new random secret, base32. */
export const newTotpSecret = (): string => base32Encode(randomBytes(SECRET_BYTES));

/** The `otpauth://` URI authenticator apps read from a QR code. */
export function otpauthUri(issuer: string, accountName: string, secret: string): string {
  const label = encodeURIComponent(`${issuer}:${accountName}`);
  const params = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) });
  return `otpauth://totp/${label}?${params.toString()}`;
}

/** Ten single-use recovery codes, `xxxxx-xxxxx` in lower-case base32 (50 random bits each). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const text = base32Encode(randomBytes(7)).slice(0, 10).toLowerCase();
    return `${text.slice(0, 5)}-${text.slice(5)}`;
  });
}

/** What the store keeps of a recovery code: SHA-256 of its letters, whatever the case or separators typed. */
export const hashRecoveryCode = (code: string): string =>
  createHash('sha256')
    .update(code.toLowerCase().replace(/[^a-z2-7]/g, ''))
    .digest('hex');
