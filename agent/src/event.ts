import { createHash } from 'node:crypto';

/** One `server.*` event as the agent sends it to POST /v1/events. */
export interface AgentEvent {
  readonly event: string;
  readonly event_id: string;
  readonly timestamp: string;
  readonly host: string;
  readonly actor_id?: string;
  readonly ip?: string;
  readonly metadata: Record<string, unknown>;
}

/**
 * A stable idempotency key from the facts that identify one occurrence (source, file, byte
 * offset, line, ...). The same occurrence always gets the same key, so a re-send after a
 * crash is answered with the original result instead of being stored twice.
 */
export function eventIdOf(...parts: readonly (string | number)[]): string {
  return 'va_' + createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 40);
}

/** Strips undefined fields so the JSON sent is exactly what `parse` prints. */
export function makeEvent(fields: {
  event: string;
  event_id: string;
  at: number;
  host: string;
  actor_id?: string | undefined;
  ip?: string | undefined;
  metadata: Record<string, unknown>;
}): AgentEvent {
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields.metadata)) if (v !== undefined) metadata[k] = v;
  return {
    event: fields.event,
    event_id: fields.event_id,
    timestamp: new Date(fields.at).toISOString(),
    host: fields.host,
    ...(fields.actor_id ? { actor_id: fields.actor_id } : {}),
    ...(fields.ip ? { ip: fields.ip } : {}),
    metadata,
  };
}
