import type { AgentEvent } from '../event.js';
import type { SourceContext } from './source.js';

/**
 * State-polling sources (files, ports, modules, firewall rules) compare what they see with
 * the snapshot saved in the buffer, and save the new snapshot in the same transaction as
 * the events for the differences. The first look only records a baseline; changes made
 * while the agent was stopped are reported at its next look.
 */
export function diffSnapshot<T>(
  ctx: SourceContext,
  key: string,
  current: Readonly<Record<string, T>>,
  events: (change: { added: [string, T][]; removed: [string, T][]; changed: [string, T, T][] }) => AgentEvent[],
  same: (a: T, b: T) => boolean = (a, b) => JSON.stringify(a) === JSON.stringify(b),
): void {
  const previous = ctx.buffer.getState<Record<string, T>>(key);
  if (previous === undefined) {
    ctx.buffer.append([], { [key]: current });
    return;
  }
  const added: [string, T][] = [];
  const removed: [string, T][] = [];
  const changed: [string, T, T][] = [];
  for (const [k, v] of Object.entries(current)) {
    const before = previous[k];
    if (before === undefined) added.push([k, v]);
    else if (!same(before, v)) changed.push([k, before, v]);
  }
  for (const [k, v] of Object.entries(previous)) if (!(k in current)) removed.push([k, v]);
  if (added.length + removed.length + changed.length === 0) return;
  ctx.buffer.append(events({ added, removed, changed }), { [key]: current });
}
