import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { cidrContains, parseAddress, parseCidr, type Cidr } from '../util/ip.js';

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
  const exempt = limits.exempt.map(parseCidr).filter((c): c is Cidr => c !== undefined);
  const isExempt = (ip: string): boolean => {
    if (exempt.length === 0) return false;
    const parsed = parseAddress(ip);
    return parsed !== undefined && exempt.some((range) => cidrContains(range, parsed));
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
