import http from 'node:http';
import https from 'node:https';
import { forbiddenAddress, ForbiddenAddressError, guardedLookup, hostOf, isAddress, type SsrfGuard } from './ssrf.js';
import { errorCode } from '../util/caught.js';

/** What one POST came to. */
export type SendResult =
  | { readonly kind: 'answered'; readonly status: number; readonly retryAfter: string | undefined; readonly body: string }
  | { readonly kind: 'network'; readonly error: string }
  | { readonly kind: 'refused'; readonly reason: string };

const ANSWER_BYTES = 512;

/**
 * POSTs a body once: a fresh connection (no pooled socket from an earlier resolution), the
 * address checked at connect time, no redirects followed, the whole exchange bounded by
 * `timeoutMs`, and at most the first 512 bytes of the answer kept.
 */
export function send(url: URL, headers: Record<string, string>, body: string, timeoutMs: number, guard: SsrfGuard): Promise<SendResult> {
  const host = hostOf(url);
  if (isAddress(host)) {
    const why = forbiddenAddress(host, guard.allowed);
    if (why !== undefined) return Promise.resolve({ kind: 'refused', reason: `${host} is ${why}` });
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'user-agent': 'Vigil-Webhooks/1', 'content-length': String(Buffer.byteLength(body)), ...headers },
        ...(isAddress(host) ? {} : { lookup: guardedLookup(guard) }),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < ANSWER_BYTES) {
            chunks.push(chunk.subarray(0, ANSWER_BYTES - kept));
            kept += Math.min(chunk.length, ANSWER_BYTES - kept);
          }
        });
        const answered = () =>
          finish({
            kind: 'answered',
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            body: Buffer.concat(chunks).toString('utf8'),
          });
        response.on('end', answered);
        response.on('error', answered);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ kind: 'network', error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    request.on('error', (err) => {
      if (err instanceof ForbiddenAddressError) finish({ kind: 'refused', reason: err.message });
      else finish({ kind: 'network', error: `${errorCode(err) ?? 'error'}: ${err.message}` });
    });
    request.end(body);
  });
}
