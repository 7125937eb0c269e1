import { href } from './router';

export type EntityKind = 'actor' | 'ip' | 'host' | 'session';

/** A value as one quoted term of the search grammar (`session_id:"a b"`), whatever it contains. */
export const quoted = (value: string): string => `"${value.replace(/["\\]/g, '\\$&')}"`;

/** Where an entity's page is: actors, addresses and hosts have their own; a session is the events list filtered to it. */
export function entityHref(kind: EntityKind, value: string): string {
  if (kind === 'session') return href('/events', { q: `session_id:${quoted(value)}` });
  return href(`/${kind}/${encodeURIComponent(value)}`);
}

/**
 * An actor, address, host or session wherever it appears: a link to its page, in monospace.
 * Addresses and hosts never break across lines (a wrapped IPv4 address reads as two).
 */
export function EntityLink({ kind, value, label }: { kind: EntityKind; value: string | null | undefined; label?: string }) {
  if (!value) return <span class="muted">—</span>;
  return (
    <a class={kind === 'ip' || kind === 'host' ? 'mono entity nowrap' : 'mono entity'} href={entityHref(kind, value)}>
      {label ?? value}
    </a>
  );
}

/** An alert's subject (`actor:u1`, `ip:1.2.3.4`, `host:web1`) as a link to that entity, else as text. */
export function SubjectLink({ subject }: { subject: string }) {
  const at = subject.indexOf(':');
  const kind = subject.slice(0, at);
  const value = subject.slice(at + 1);
  if (at > 0 && (kind === 'actor' || kind === 'ip' || kind === 'host' || kind === 'session')) return <EntityLink kind={kind} value={value} label={subject} />;
  return <span class="mono">{subject}</span>;
}
