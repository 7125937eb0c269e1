import { eventIdOf, makeEvent, type AgentEvent } from '../event.js';
import { every, type Source, type SourceContext } from './source.js';
import { FileTail, type Line } from './tail.js';

// 2026-01-20 10:15:02 install nginx:amd64 <none> 1.22.1-9
const DPKG = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (install|upgrade) (\S+?)(?::(\S+))? (\S+) (\S+)$/;
// 2026-01-20T10:15:02+0000 SUBDEBUG Installed: nginx-1:1.20.1-14.el9.x86_64
const DNF = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:?\d{2})) SUBDEBUG (Installed|Upgrade|Upgraded|Reinstall): (\S+)$/;
const RPM_NEVRA = /^(.+)-((?:\d+:)?[^-]+-[^-]+)\.([^.]+)$/;

/** dpkg (Debian, Ubuntu) and dnf (RHEL, Fedora) package logs to `server.package.installed`. */
export function packageLineHandler(host: string): (lines: readonly Line[], file: { path: string; ino: number }) => AgentEvent[] {
  return (lines, file) => {
    const out: AgentEvent[] = [];
    for (const line of lines) {
      const id = eventIdOf(host, 'packages', file.path, file.ino, line.offset, line.text);
      const d = DPKG.exec(line.text);
      if (d) {
        // dpkg.log has local time without a zone.
        const at = new Date(`${d[1]}T${d[2]}`).getTime();
        out.push(
          makeEvent({
            event: 'server.package.installed',
            event_id: id,
            at,
            host,
            metadata: {
              source: 'packages',
              manager: 'dpkg',
              action: d[3],
              package: d[4],
              arch: d[5],
              previous_version: d[6] === '<none>' ? undefined : d[6],
              version: d[7],
            },
          }),
        );
        continue;
      }
      const r = DNF.exec(line.text);
      if (!r) continue;
      if (r[2] === 'Upgraded') continue; // the old package of an upgrade; the new one has its own line
      const nevra = RPM_NEVRA.exec(r[3] as string);
      out.push(
        makeEvent({
          event: 'server.package.installed',
          event_id: id,
          at: Date.parse((r[1] as string).replace(/([+-]\d{2})(\d{2})$/, '$1:$2')),
          host,
          metadata: {
            source: 'packages',
            manager: 'dnf',
            action: r[2] === 'Installed' ? 'install' : r[2] === 'Upgrade' ? 'upgrade' : 'reinstall',
            package: nevra ? nevra[1] : r[3],
            version: nevra?.[2],
            arch: nevra?.[3],
          },
        }),
      );
    }
    return out;
  };
}

export function packagesSource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.packages;
  const tails = cfg.paths.map((p) => new FileTail(p, ctx.buffer, packageLineHandler(ctx.host), ctx.log));
  let loop: { stop(): Promise<void> } | undefined;
  return {
    name: 'packages',
    start() {
      loop = every(cfg.poll_ms, ctx, 'packages', () => tails.forEach((t) => t.poll()));
    },
    async stop() {
      await loop?.stop();
      for (const t of tails) t.close();
    },
  };
}
