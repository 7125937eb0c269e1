import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { eventIdOf, makeEvent, type AgentEvent } from '../event.js';
import { diffSnapshot } from './snapshot.js';
import { every, type Source, type SourceContext } from './source.js';

interface FileState {
  readonly sha256: string;
  readonly mode: string;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  /** Lines of a crontab, to name the entries a change added. */
  readonly lines?: readonly string[];
}

const MAX_DEPTH = 6;
const MAX_FILES = 20_000;
const CRON_PREFIXES = ['/etc/crontab', '/etc/cron.d/', '/etc/cron.hourly/', '/etc/cron.daily/', '/etc/cron.weekly/', '/etc/cron.monthly/', '/var/spool/cron/'];

export const isCronPath = (path: string): boolean => CRON_PREFIXES.some((p) => path === p || path.startsWith(p));

/** Expands `*` within path segments (`/home/*\/.ssh/authorized_keys`). */
export function expandGlob(pattern: string): string[] {
  if (!pattern.includes('*')) return [pattern];
  const parts = pattern.split('/');
  let bases = [''];
  for (const part of parts.slice(1)) {
    if (!part.includes('*')) {
      bases = bases.map((b) => `${b}/${part}`);
      continue;
    }
    const re = new RegExp('^' + part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*') + '$');
    bases = bases.flatMap((b) => {
      try {
        return readdirSync(b || '/')
          .filter((n) => re.test(n))
          .map((n) => `${b}/${n}`);
      } catch {
        return [];
      }
    });
  }
  return bases;
}

const modeOf = (st: Stats): string => (st.mode & 0o7777).toString(8).padStart(4, '0');

function stateOf(path: string, st: Stats, previous: FileState | undefined, maxBytes: number): FileState {
  // Unchanged inode, size and time: keep the hash instead of reading the file again.
  const same = previous !== undefined && previous.ino === st.ino && previous.size === st.size && previous.mtimeMs === st.mtimeMs;
  let sha256 = same ? previous.sha256 : '';
  let lines = same ? previous.lines : undefined;
  if (!same) {
    if (st.isSymbolicLink()) sha256 = 'symlink:' + readlinkSync(path);
    else if (st.size > maxBytes) sha256 = `too_large:${st.size}:${st.mtimeMs}`;
    else {
      const content = readFileSync(path);
      sha256 = createHash('sha256').update(content).digest('hex');
      if (isCronPath(path) && st.size <= 65_536)
        lines = content
          .toString('utf8')
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l !== '' && !l.startsWith('#'));
    }
  }
  return { sha256, mode: modeOf(st), uid: st.uid, gid: st.gid, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ...(lines ? { lines } : {}) };
}

/** Every file under the configured paths (directories walked, globs expanded), unreadable ones skipped. */
export function scanFiles(patterns: readonly string[], previous: Readonly<Record<string, FileState>>, maxBytes: number): Record<string, FileState> {
  const out: Record<string, FileState> = {};
  let count = 0;
  const visit = (path: string, depth: number) => {
    if (count >= MAX_FILES) return;
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      if (depth >= MAX_DEPTH) return;
      let names: string[];
      try {
        names = readdirSync(path);
      } catch {
        return;
      }
      for (const n of names) visit(join(path, n), depth + 1);
      return;
    }
    if (!st.isFile() && !st.isSymbolicLink()) return;
    try {
      out[path] = stateOf(path, st, previous[path], maxBytes);
      count++;
    } catch {
      // unreadable (permissions): not watched rather than reported as deleted
    }
  };
  for (const p of patterns) for (const path of expandGlob(p)) visit(path, 0);
  return out;
}

/** File integrity: created, modified (old and new hash), deleted, permission or owner changed; crontabs as `server.cron.*`. */
export function filesSource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.files;
  const key = 'files:snapshot';
  let loop: { stop(): Promise<void> } | undefined;
  const check = () => {
    const previous = ctx.buffer.getState<Record<string, FileState>>(key) ?? {};
    const current = scanFiles(cfg.paths, previous, cfg.max_file_bytes);
    const now = Date.now();
    const event = (type: string, path: string, metadata: Record<string, unknown>, salt: string): AgentEvent =>
      makeEvent({
        event: type,
        event_id: eventIdOf(ctx.host, 'files', type, path, salt, now),
        at: now,
        host: ctx.host,
        metadata: { source: 'files', path, ...metadata },
      });
    diffSnapshot<FileState>(
      ctx,
      key,
      current,
      ({ added, removed, changed }) => {
        const out: AgentEvent[] = [];
        for (const [path, s] of added) {
          const meta = { sha256: s.sha256, mode: s.mode, uid: s.uid, gid: s.gid, size: s.size };
          out.push(
            isCronPath(path)
              ? event('server.cron.added', path, { ...meta, command: s.lines?.join('\n') }, s.sha256)
              : event('server.file.created', path, meta, s.sha256),
          );
        }
        for (const [path, s] of removed)
          out.push(event(isCronPath(path) ? 'server.cron.removed' : 'server.file.deleted', path, { old_sha256: s.sha256 }, s.sha256));
        for (const [path, before, after] of changed) {
          if (before.sha256 !== after.sha256) {
            const meta = { old_sha256: before.sha256, new_sha256: after.sha256, old_size: before.size, size: after.size };
            if (isCronPath(path)) {
              const old = new Set(before.lines ?? []);
              const addedLines = (after.lines ?? []).filter((l) => !old.has(l));
              out.push(event('server.cron.modified', path, { ...meta, command: addedLines.length > 0 ? addedLines.join('\n') : undefined }, after.sha256));
            } else out.push(event('server.file.modified', path, meta, after.sha256));
          }
          if (before.mode !== after.mode || before.uid !== after.uid || before.gid !== after.gid)
            out.push(
              event(
                'server.file.permission_changed',
                path,
                { old_mode: before.mode, mode: after.mode, old_uid: before.uid, uid: after.uid, old_gid: before.gid, gid: after.gid },
                `${after.mode}:${after.uid}:${after.gid}`,
              ),
            );
        }
        return out;
      },
      // Only content, mode and owner are changes; a touched file with the same content is not.
      (a, b) => a.sha256 === b.sha256 && a.mode === b.mode && a.uid === b.uid && a.gid === b.gid,
    );
    // Keep the fresh stat fields (mtime, inode) even when nothing reportable changed, so unchanged files are not hashed again.
    if (JSON.stringify(ctx.buffer.getState(key)) !== JSON.stringify(current)) ctx.buffer.setState(key, current);
  };
  return {
    name: 'files',
    start() {
      loop = every(cfg.interval_s * 1000, ctx, 'files', check);
    },
    async stop() {
      await loop?.stop();
    },
  };
}
