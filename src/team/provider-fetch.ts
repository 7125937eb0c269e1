import http from 'node:http';
import https from 'node:https';
import type { CustomFetch } from 'openid-client';
import { forbiddenAddress, ForbiddenAddressError, guardedLookup, hostOf, isAddress, type SsrfGuard } from '../webhooks/ssrf.js';

/** Bytes an identity provider's answer may have: discovery documents, key sets and token answers are a few KB. */
export const PROVIDER_ANSWER_BYTES = 256 * 1024;

export class ProviderAnswerTooLargeError extends Error {
  readonly code = 'ERR_PROVIDER_ANSWER_TOO_LARGE';
}

/**
 * A fetch for openid-client when the provider's address comes from an account's own settings:
 * every connection goes through the same address guard as webhooks (private, loopback,
 * link-local and metadata addresses refused at connect time, so DNS rebinding cannot reach
 * them), redirects are not followed, and an answer larger than `maxBytes` is cut off with an
 * error instead of being read into memory.
 */
export function guardedProviderFetch(guard: SsrfGuard, maxBytes = PROVIDER_ANSWER_BYTES): CustomFetch {
  return (text, options) => {
    const url = new URL(text);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.reject(new TypeError(`${url.protocol} is not a provider scheme`));
    const host = hostOf(url);
    if (isAddress(host)) {
      const why = forbiddenAddress(host, guard.allowed);
      if (why !== undefined) return Promise.reject(new ForbiddenAddressError(`${host} is ${why}`));
    }
    const client = url.protocol === 'https:' ? https : http;
    const body = bodyText(options.body);
    return new Promise<Response>((resolve, reject) => {
      const request = client.request(
        url,
        {
          method: options.method,
          agent: false,
          headers: { ...options.headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) },
          signal: options.signal,
          ...(isAddress(host) ? {} : { lookup: guardedLookup(guard) }),
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) {
              response.destroy();
              reject(new ProviderAnswerTooLargeError(`the provider's answer from ${url.origin} exceeds ${maxBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          response.on('error', reject);
          response.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (Array.isArray(value)) for (const v of value) headers.append(name, v);
              else if (value !== undefined) headers.set(name, value);
            }
            const status = response.statusCode ?? 502;
            // A Response cannot carry a body with these statuses.
            const empty = status === 204 || status === 205 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status, statusText: response.statusMessage ?? '', headers }));
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  };
}

/** openid-client sends form bodies as URLSearchParams and JSON as strings; nothing else reaches a provider. */
function bodyText(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  throw new TypeError('unsupported request body for an identity provider');
}
