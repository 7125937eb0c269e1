import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ConnectionLimits {
  /** Open connections allowed per source address; more are closed on arrival. */
  readonly maxPerIp: number;
  /** CIDRs whose connections are not capped (trusted proxies carry many clients). */
  readonly exempt: readonly string[];
}

/** Live connection count per source address, for tests and /metrics. */
export interface ConnectionCounter {
  open(ip: string): number;
  readonly refused: number;
}

/**
 * A per-IP cap on concurrent TCP connections, enforced on the server's 'connection' event
 * before any byte is parsed: one address holding many slow connections (slowloris) cannot
 * exhaust the process's sockets or memory. The per-IP request cap (guards.ts) cannot do
 * this: a slow client never completes a request.
 */
export function limitConnectionsPerIp(server: Server, limits: ConnectionLimits): ConnectionCounter {
  const open = new Map<string, number>();
  const exempt = limits.exempt.map((cidr) =>
    cidr.includes('/')
      ? ipaddr.parseCIDR(cidr)
      : ([ipaddr.parse(cidr), ipaddr.parse(cidr).kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number]),
  );
  const isExempt = (ip: string): boolean => {
    if (exempt.length === 0 || !ipaddr.isValid(ip)) return false;
    const parsed = ipaddr.process(ip);
    return exempt.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
  };
  let refused = 0;
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? 'unknown';
    if (isExempt(ip)) return;
    const count = open.get(ip) ?? 0;
    if (count >= limits.maxPerIp) {
      refused++;
      socket.destroy();
      return;
    }
    open.set(ip, count + 1);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left <= 0) open.delete(ip);
      else open.set(ip, left);
    });
  });
  return {
    open: (ip) => open.get(ip) ?? 0,
    get refused() {
      return refused;
    },
  };
}
