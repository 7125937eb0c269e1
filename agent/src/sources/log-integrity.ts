import { eventIdOf, makeEvent } from '../event.js';
import { classifyChange, markOf, statOrUndefined, type FileMark } from '../util/rotation.js';
import { every, type Source, type SourceContext } from './source.js';

/**
 * Log clearing and tampering: a log that empties, shrinks, disappears, is rewritten in
 * place, or whose modification time moves back, without a rotated copy to explain it.
 */
export function logIntegritySource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.log_integrity;
  let loop: { stop(): Promise<void> } | undefined;
  const check = () => {
    for (const path of cfg.paths) {
      const key = `integrity:${path}`;
      const previous = ctx.buffer.getState<FileMark | null>(key) ?? undefined;
      const st = statOrUndefined(path);
      if (previous === undefined && st === undefined) continue;
      const change = classifyChange(path, previous, st);
      const mark = st === undefined ? null : markOf(path, st);
      if (change.kind === 'cleared' || change.kind === 'tampered') {
        const now = Date.now();
        const event = makeEvent({
          event: change.kind === 'cleared' ? 'server.log.cleared' : 'server.log.tampered',
          event_id: eventIdOf(ctx.host, 'log_integrity', path, previous?.ino ?? 0, previous?.size ?? 0, mark?.ino ?? 0, mark?.size ?? 0, now),
          at: now,
          host: ctx.host,
          metadata: { source: 'log_integrity', path, reason: change.reason, previous_size: previous?.size, size: st?.size ?? 0 },
        });
        ctx.buffer.append([event], { [key]: mark });
      } else if (change.kind !== 'unchanged') ctx.buffer.append([], { [key]: mark });
      else if (mark !== null && previous !== undefined && mark.mtimeMs !== previous.mtimeMs) ctx.buffer.append([], { [key]: mark });
    }
  };
  return {
    name: 'log_integrity',
    start() {
      loop = every(cfg.interval_s * 1000, ctx, 'log_integrity', check);
    },
    async stop() {
      await loop?.stop();
    },
  };
}
