import { existsSync } from 'node:fs';
import type { AgentEvent } from '../event.js';
import { parseSyslogLine } from '../syslog.js';
import { AuthParser } from './auth-parser.js';
import { every, type Source, type SourceContext } from './source.js';
import { FileTail, type Line } from './tail.js';

/** Line handler for syslog-format auth logs: one parser per file, so per-connection state stays with its log. */
export function authLineHandler(host: string): (lines: readonly Line[], file: { path: string; ino: number }) => AgentEvent[] {
  const parser = new AuthParser(host);
  return (lines, file) => {
    const now = Date.now();
    const out: AgentEvent[] = [];
    for (const line of lines) {
      const rec = parseSyslogLine(line.text, now);
      if (rec !== undefined) out.push(...parser.parse(rec, `file:${file.path}:${file.ino}:${line.offset}:${line.text}`));
    }
    return out;
  };
}

/** sshd, sudo, su and shadow-utils from syslog files (auth.log on Debian/Ubuntu, secure on RHEL). */
export function authFileSource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.auth;
  const tails = cfg.paths.map((p) => new FileTail(p, ctx.buffer, authLineHandler(ctx.host), ctx.log));
  let loop: { stop(): Promise<void> } | undefined;
  return {
    name: 'auth',
    start() {
      ctx.log.info('auth: following', { paths: cfg.paths.filter((p) => existsSync(p)) });
      loop = every(cfg.poll_ms, ctx, 'auth', () => {
        for (const t of tails) t.poll();
      });
    },
    async stop() {
      await loop?.stop();
      for (const t of tails) t.close();
    },
  };
}
