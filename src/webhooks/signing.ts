/**
 * Signatures in the Standard Webhooks scheme (the one Stripe's popularised): headers
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a space-separated
 * list of `v1,<base64 HMAC-SHA256>` over `<id>.<timestamp>.<body>`. The key is the base64
 * after the `whsec_` prefix of the secret. While a rotated secret overlaps, both sign.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** Receivers reject a timestamp further than this from their clock (replays). */
export const TOLERANCE_SECONDS = 300;

export const newSigningSecret = (): string => SECRET_PREFIX + randomBytes(24).toString('base64');

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of a delivery, signed with every given secret. */
export function signedHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signature(s, id, timestampSeconds, body)).join(' '),
  };
}

export type Verification = { readonly ok: true } | { readonly ok: false; readonly reason: 'missing headers' | 'stale timestamp' | 'bad signature' };

/** A receiver's check: the signature matches one listed and the timestamp is within 5 minutes of `nowSeconds`. */
export function verifySignature(
  secret: string,
  headers: { id?: string; timestamp?: string; signature?: string },
  body: string,
  nowSeconds: number,
): Verification {
  if (!headers.id || !headers.timestamp || !headers.signature) return { ok: false, reason: 'missing headers' };
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) return { ok: false, reason: 'stale timestamp' };
  const expected = Buffer.from(signature(secret, headers.id, timestamp, body));
  for (const candidate of headers.signature.split(' ')) {
    const given = Buffer.from(candidate);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'bad signature' };
}
