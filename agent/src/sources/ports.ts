import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { eventIdOf, makeEvent } from '../event.js';
import { diffSnapshot } from './snapshot.js';
import { every, type Source, type SourceContext } from './source.js';

interface Listener {
  readonly protocol: 'tcp' | 'tcp6';
  readonly address: string;
  readonly port: number;
  readonly inode: string;
}

const LISTEN = '0A';

function ipv4(hex: string): string {
  const n = Buffer.from(hex, 'hex');
  return `${n[3]}.${n[2]}.${n[1]}.${n[0]}`;
}

function ipv6(hex: string): string {
  // Four little-endian 32-bit words.
  const words = [0, 1, 2, 3].map((i) =>
    Buffer.from(hex.slice(i * 8, i * 8 + 8), 'hex')
      .reverse()
      .toString('hex'),
  );
  const groups = words.join('').match(/.{4}/g) ?? [];
  return groups
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')
    .replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** Listening TCP sockets from /proc/net/tcp and tcp6, keyed "tcp:0.0.0.0:22" and "tcp6:[::]:22". */
export function parseProcNet(text: string, protocol: 'tcp' | 'tcp6'): Record<string, Listener> {
  const out: Record<string, Listener> = {};
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== LISTEN) continue;
    const [addrHex, portHex] = (f[1] as string).split(':') as [string, string];
    const address = protocol === 'tcp' ? ipv4(addrHex) : ipv6(addrHex);
    const port = parseInt(portHex, 16);
    out[protocol === 'tcp' ? `tcp:${address}:${port}` : `tcp6:[${address}]:${port}`] = { protocol, address, port, inode: f[9] as string };
  }
  return out;
}

/** The process owning a socket inode, when /proc lets us see it (root or the same user). */
function ownerOf(inode: string): { pid: number; process: string } | undefined {
  const target = `socket:[${inode}]`;
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return { pid: Number(pid), process: readFileSync(`/proc/${pid}/comm`, 'utf8').trim() };
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

/** `server.network.listener.opened` for each TCP port that starts listening. */
export function portsSource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.ports;
  let loop: { stop(): Promise<void> } | undefined;
  const check = () => {
    const current: Record<string, Listener> = {};
    for (const protocol of ['tcp', 'tcp6'] as const) {
      try {
        Object.assign(current, parseProcNet(readFileSync(`${cfg.proc_net}/${protocol}`, 'utf8'), protocol));
      } catch {
        // no IPv6
      }
    }
    const now = Date.now();
    diffSnapshot<Listener>(
      ctx,
      'ports:snapshot',
      current,
      ({ added }) =>
        added.map(([k, l]) =>
          makeEvent({
            event: 'server.network.listener.opened',
            event_id: eventIdOf(ctx.host, 'ports', k, l.inode),
            at: now,
            host: ctx.host,
            metadata: { source: 'ports', protocol: l.protocol, address: l.address, port: l.port, ...ownerOf(l.inode) },
          }),
        ),
      (a, b) => a.port === b.port && a.address === b.address,
    );
  };
  return {
    name: 'ports',
    start() {
      loop = every(cfg.interval_s * 1000, ctx, 'ports', check);
    },
    async stop() {
      await loop?.stop();
    },
  };
}
