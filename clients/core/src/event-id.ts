const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A UUID version 7: 48 bits of Unix milliseconds then random bits, so ids sort by creation
 * time. The service uses it to recognise a retried event and never count it twice.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let ms = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = 0x70 | ((bytes[6] as number) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  let out = '';
  for (let i = 0; i < 16; i++) {
    out += HEX[bytes[i] as number];
    if (i === 3 || i === 5 || i === 7 || i === 9) out += '-';
  }
  return out;
}
