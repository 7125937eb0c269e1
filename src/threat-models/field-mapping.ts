/**
 * Sigma rules name fields the way their log sources do (Windows `User`, web server `cs-method`,
 * ECS `source.ip`). This table maps the common names to Vigil's event fields; any other name
 * is read from `metadata.<name>`. An account overrides or extends the table in its settings.
 */
import type { ErrorDetail } from '../event/rejection.js';
import { isFieldPath } from './validate.js';

export const DEFAULT_SIGMA_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  // The subject of the event
  User: 'actor_id',
  'user.name': 'actor_id',
  'user.id': 'actor_id',
  UserName: 'actor_id',
  username: 'actor_id',
  TargetUserName: 'actor_id',
  SubjectUserName: 'actor_id',
  'cs-username': 'actor_id',
  'user.email': 'email',
  EmailAddress: 'email',
  // Source address
  SourceIp: 'ip',
  src_ip: 'ip',
  'source.ip': 'ip',
  'client.ip': 'ip',
  ClientIP: 'ip',
  IpAddress: 'ip',
  'c-ip': 'ip',
  // HTTP
  'url.path': 'request.path',
  'cs-uri-stem': 'request.path',
  'c-uri': 'request.path',
  uri_path: 'request.path',
  'url.query': 'request.query',
  'cs-uri-query': 'request.query',
  uri_query: 'request.query',
  'http.request.method': 'request.method',
  'cs-method': 'request.method',
  method: 'request.method',
  'http.response.status_code': 'request.status',
  'sc-status': 'request.status',
  status_code: 'request.status',
  'user_agent.original': 'user_agent',
  'c-useragent': 'user_agent',
  UserAgent: 'user_agent',
  http_user_agent: 'user_agent',
  // Host and session
  'host.name': 'host',
  'host.hostname': 'host',
  Computer: 'host',
  ComputerName: 'host',
  Hostname: 'host',
  'session.id': 'session_id',
  SessionId: 'session_id',
  // The event itself
  'event.action': 'event',
  'event.id': 'event_id',
});

const lowerDefaults = new Map(Object.entries(DEFAULT_SIGMA_FIELDS).map(([k, v]) => [k.toLowerCase(), v]));

export type FieldMapping = Readonly<Record<string, string>>;

/** Vigil's field for a Sigma field name: the account's mapping, the table, Vigil's own names, else `metadata.<name>`. */
export function mapSigmaField(name: string, overrides: FieldMapping = {}): string {
  if (Object.hasOwn(overrides, name)) return overrides[name] as string;
  if (Object.hasOwn(DEFAULT_SIGMA_FIELDS, name)) return DEFAULT_SIGMA_FIELDS[name] as string;
  if (isFieldPath(name)) return name;
  return lowerDefaults.get(name.toLowerCase()) ?? `metadata.${name}`;
}

const MAX_OVERRIDES = 200;

/** Checks an account's mapping: `{ "<Sigma field>": "<Vigil field path>" }`. */
export function validateFieldMapping(value: unknown): { ok: true; value: FieldMapping } | { ok: false; errors: ErrorDetail[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, errors: [{ field: 'fields', message: 'must be an object {"<Sigma field>": "<Vigil field path>"}' }] };
  const entries = Object.entries(value as Record<string, unknown>);
  const errors: ErrorDetail[] = [];
  if (entries.length > MAX_OVERRIDES) errors.push({ field: 'fields', message: `at most ${MAX_OVERRIDES} entries` });
  for (const [name, target] of entries) {
    if (name.length === 0 || name.length > 128 || name.includes('|'))
      errors.push({ field: `fields.${name}`, message: 'a Sigma field name of 1 to 128 characters without "|"' });
    else if (typeof target !== 'string' || !isFieldPath(target))
      errors.push({ field: `fields.${name}`, message: 'must be a Vigil field path such as "actor_id", "request.path" or "metadata.<name>"' });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: Object.fromEntries(entries) as FieldMapping };
}
