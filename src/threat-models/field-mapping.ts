/**
 * Sigma rules name fields the way their log sources do (Windows `User`, web server `cs-method`,
 * ECS `source.ip`). This table maps the common names to Vigil's event fields; any other name
 * is read from `metadata.<name>`. An account overrides or extends the table in its settings.
 */
import { Type } from '@sinclair/typebox';
import type { ErrorDetail } from '../event/rejection.js';
import { schemaCheck } from '../util/schema-check.js';
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
  // HTTP: the web server and proxy names of the Sigma taxonomy (W3C extended log format) and
  // their common spellings. Names with no field of their own read one metadata key each, so a
  // sender has one place to put the value and a rule's `null` means what it says.
  'url.path': 'request.path',
  'cs-uri-stem': 'request.path',
  'c-uri-stem': 'request.path',
  uri_path: 'request.path',
  'url.original': 'request.url',
  'url.full': 'request.url',
  'c-uri': 'request.url',
  'cs-uri': 'request.url',
  'url.extension': 'request.extension',
  'c-uri-extension': 'request.extension',
  'url.query': 'request.query',
  'cs-uri-query': 'request.query',
  'c-uri-query': 'request.query',
  uri_query: 'request.query',
  'http.request.method': 'request.method',
  'cs-method': 'request.method',
  method: 'request.method',
  'http.response.status_code': 'request.status',
  'sc-status': 'request.status',
  status_code: 'request.status',
  'user_agent.original': 'user_agent',
  'c-useragent': 'user_agent',
  'cs-user-agent': 'user_agent',
  'cs(User-Agent)': 'user_agent',
  UserAgent: 'user_agent',
  http_user_agent: 'user_agent',
  'cs-host': 'metadata.http_host',
  'cs(Host)': 'metadata.http_host',
  'r-dns': 'metadata.http_host',
  'url.domain': 'metadata.http_host',
  'cs-referrer': 'metadata.referrer',
  'cs-referer': 'metadata.referrer',
  'cs(Referer)': 'metadata.referrer',
  'http.request.referrer': 'metadata.referrer',
  'cs-cookie': 'metadata.cookie',
  'cs(Cookie)': 'metadata.cookie',
  'cs-version': 'metadata.http_version',
  'http.version': 'metadata.http_version',
  'cs-bytes': 'metadata.request_bytes',
  'http.request.bytes': 'metadata.request_bytes',
  'sc-bytes': 'metadata.response_bytes',
  'http.response.bytes': 'metadata.response_bytes',
  'c-uri-scheme': 'metadata.url_scheme',
  'url.scheme': 'metadata.url_scheme',
  // The server side of a connection (the client side is `ip`).
  dst_ip: 'metadata.server_ip',
  's-ip': 'metadata.server_ip',
  'destination.ip': 'metadata.server_ip',
  DestinationIp: 'metadata.server_ip',
  dst_port: 'metadata.server_port',
  's-port': 'metadata.server_port',
  'destination.port': 'metadata.server_port',
  DestinationPort: 'metadata.server_port',
  src_port: 'metadata.client_port',
  'source.port': 'metadata.client_port',
  SourcePort: 'metadata.client_port',
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
const TARGET = 'must be a Vigil field path such as "actor_id", "request.path" or "metadata.<name>"';

/** An account's mapping: `{ "<Sigma field>": "<Vigil field path>" }`. */
const FieldMappingSchema = Type.Record(Type.RegExp(/^[^|]{1,128}$/), Type.String({ message: TARGET }), {
  maxProperties: MAX_OVERRIDES,
  additionalProperties: false,
  message: `must be an object {"<Sigma field>": "<Vigil field path>"} of at most ${MAX_OVERRIDES} entries`,
  unknownMessage: 'a Sigma field name of 1 to 128 characters without "|"',
});
const checkMapping = schemaCheck(FieldMappingSchema, 'fields');

/** Checks an account's mapping: the shape by its schema, and that each target is a field a model may read; every problem, in entry order. */
export function validateFieldMapping(value: unknown): { ok: true; value: FieldMapping } | { ok: false; errors: ErrorDetail[] } {
  const checked = checkMapping(value);
  const byField = new Map((checked.ok ? [] : checked.errors).map((e) => [e.field, e.message]));
  if (byField.has('fields')) return { ok: false, errors: [{ field: 'fields', message: byField.get('fields') as string }] };
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [name, target] of entries)
    if (typeof target === 'string' && !isFieldPath(target) && !byField.has(`fields.${name}`)) byField.set(`fields.${name}`, TARGET);
  if (byField.size === 0) return { ok: true, value: Object.fromEntries(entries) as FieldMapping };
  const order = entries.map(([name]) => `fields.${name}`).filter((field) => byField.has(field));
  return { ok: false, errors: order.map((field) => ({ field, message: byField.get(field) as string })) };
}
