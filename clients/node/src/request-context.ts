import type { VigilEvent } from '@vigil/client-core';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** The parts of an incoming request read here: Node's IncomingMessage, Express and Fastify all fit. */
export interface IncomingRequestLike {
  headers?: Headers;
  method?: string;
  url?: string;
  /** Express: the URL before routers stripped their mount path. */
  originalUrl?: string;
  socket?: { remoteAddress?: string } | null;
  /** Fastify: the underlying IncomingMessage. */
  raw?: IncomingRequestLike;
}

export interface RequestContextOptions {
  /**
   * Which `X-Forwarded-For` entries to believe. `false` (default): none, the socket address is
   * the user's. `true`: every one (the leftmost entry is the user). A number: that many proxies
   * in front of the app. A list of proxy addresses or CIDRs: entries are skipped from the right
   * while they are one of these proxies.
   */
  trustProxy?: boolean | number | readonly string[];
  /** The response status, when the event is sent after the answer is known. */
  status?: number;
  /** Send the query string too (it is scanned for injections, and may hold tokens). Default false. */
  includeQuery?: boolean;
}

type RequestContext = Pick<VigilEvent, 'ip' | 'user_agent' | 'request'>;

function header(headers: Headers | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function cleanAddress(address: string): string {
  let a = address.trim();
  if (a.startsWith('[')) a = a.slice(1, a.indexOf(']'));
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'));
  return a.toLowerCase().startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/** An IPv4 or IPv6 address as a number, with its width in bits; null when it is not one. */
function parseIp(address: string): { value: bigint; bits: number } | null {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) {
    const parts = address.split('.').map(Number);
    if (parts.some((p) => p > 255)) return null;
    return { value: parts.reduce((acc, p) => (acc << 8n) + BigInt(p), 0n), bits: 32 };
  }
  if (!address.includes(':') || !/^[0-9a-f:]+$/i.test(address)) return null;
  const [head, tail, ...rest] = address.split('::');
  if (rest.length > 0) return null;
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right];
  if (groups.some((g) => g.length === 0 || g.length > 4)) return null;
  return { value: groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g, 16)), 0n), bits: 128 };
}

function inRange(address: string, range: string): boolean {
  const [base = '', prefixText] = range.split('/');
  const ip = parseIp(address);
  const net = parseIp(cleanAddress(base));
  if (!ip || !net || ip.bits !== net.bits) return false;
  const prefix = prefixText === undefined ? net.bits : Number(prefixText);
  const shift = BigInt(net.bits - prefix);
  return ip.value >> shift === net.value >> shift;
}

function clientAddress(socketAddress: string | undefined, forwarded: string | undefined, trust: RequestContextOptions['trustProxy']): string | undefined {
  const chain = [...(forwarded ? forwarded.split(',').map(cleanAddress).filter(Boolean) : []), ...(socketAddress ? [cleanAddress(socketAddress)] : [])];
  if (chain.length === 0) return undefined;
  if (!trust) return chain[chain.length - 1];
  if (trust === true) return chain[0];
  if (typeof trust === 'number') return chain[Math.max(0, chain.length - 1 - trust)];
  let i = chain.length - 1;
  while (i > 0 && trust.some((range) => inRange(chain[i] as string, range))) i--;
  return chain[i];
}

/**
 * The `ip`, `user_agent` and `request` fields of an event, read from the incoming request
 * the event is about: `vigil.track({ event: 'auth.login.failure', actor_id, ...requestContext(req) })`.
 */
export function requestContext(req: IncomingRequestLike, options: RequestContextOptions = {}): RequestContext {
  const raw = req.raw ?? req;
  const headers = req.headers ?? raw.headers;
  const url = req.originalUrl ?? raw.originalUrl ?? req.url ?? raw.url ?? '/';
  const queryAt = url.indexOf('?');
  const request: NonNullable<VigilEvent['request']> = { method: req.method ?? raw.method, path: queryAt === -1 ? url : url.slice(0, queryAt) };
  if (options.includeQuery && queryAt !== -1) request.query = url.slice(queryAt + 1);
  if (options.status !== undefined) request.status = options.status;
  const context: RequestContext = { request };
  const ip = clientAddress(raw.socket?.remoteAddress ?? req.socket?.remoteAddress, header(headers, 'x-forwarded-for'), options.trustProxy);
  if (ip) context.ip = ip;
  const userAgent = header(headers, 'user-agent');
  if (userAgent) context.user_agent = userAgent;
  return context;
}
