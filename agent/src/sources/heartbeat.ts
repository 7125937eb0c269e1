import { eventIdOf, makeEvent } from '../event.js';
import type { Source, SourceContext } from './source.js';

export const AGENT_VERSION = '0.1.0';

/**
 * `server.agent.heartbeat` with the agent's own health. A fresh heartbeat replaces an
 * unsent one, so it is written even while the buffer is full and shows that state.
 */
export function heartbeatSource(ctx: SourceContext, sourceNames: () => readonly string[]): Source {
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();
  const beat = () => {
    const s = ctx.buffer.stats();
    const now = Date.now();
    ctx.buffer.replaceHeartbeat(
      makeEvent({
        event: 'server.agent.heartbeat',
        event_id: eventIdOf(ctx.host, 'heartbeat', started, now),
        at: now,
        host: ctx.host,
        metadata: {
          source: 'heartbeat',
          version: AGENT_VERSION,
          uptime_s: Math.round((now - started) / 1000),
          buffer_depth: s.depth,
          buffer_max_events: s.maxEvents,
          buffer_full: s.depth >= s.maxEvents,
          oldest_pending_age_s: s.oldestPendingAt === null ? 0 : Math.round((now - s.oldestPendingAt) / 1000),
          sent: s.sent,
          dropped: s.skippedWhileFull,
          dropped_by_service: s.droppedByService,
          rejected_invalid: s.rejected,
          last_send_at: s.lastSendAt === null ? null : new Date(s.lastSendAt).toISOString(),
          last_error: s.lastError,
          rss_bytes: process.memoryUsage.rss(),
          sources: sourceNames(),
        },
      }),
    );
  };
  return {
    name: 'heartbeat',
    start() {
      beat();
      timer = setInterval(beat, ctx.config.heartbeat.interval_s * 1000);
    },
    stop() {
      clearInterval(timer);
    },
  };
}
