/** Kysely table types: what the database columns hold. */
export interface AccountsTable {
  id: string;
  name: string;
  plan: string;
  created_at: number;
  settings: string;
}
export interface ApiKeysTable {
  id: string;
  account_id: string;
  kind: string;
  hash: string;
  prefix: string;
  allowed_origins: string;
  created_at: number;
  revoked_at: number | null;
  /** Comma-separated scopes; null for a key made before scopes existed (see `scopesOf`). */
  scopes: string | null;
  name: string | null;
}
export interface EventsTable {
  id: string;
  account_id: string;
  type: string;
  event_id: string | null;
  occurred_at: number;
  received_at: number;
  actor_id: string | null;
  ip: string | null;
  risk_score: number;
  tags: string;
  doc: string;
}
export interface AlertsTable {
  id: string;
  account_id: string;
  type: string;
  severity: string;
  subject: string;
  status: string;
  count: number;
  first_seen: number;
  last_seen: number;
  actor_id: string | null;
  event_ids: string;
  details: string;
  /** The member (user id) the alert is assigned to. */
  assignee?: string | null;
}
export interface UsageMonthlyTable {
  account_id: string;
  period: string;
  used: number;
  dropped: number;
}
export interface UsageDailyTable {
  account_id: string;
  day: string;
  used: number;
  dropped: number;
}
export interface IdempotencyTable {
  account_id: string;
  event_id: string;
  response: string;
  created_at: number;
  payload_digest: string | null;
}
export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  description: string;
  format: string;
  min_severity: string;
  alert_types: string;
  kill_chains_only: number;
  enabled: number;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}
export interface WebhookDeliveriesTable {
  id: string;
  account_id: string;
  endpoint_id: string;
  alert_id: string | null;
  event: string;
  alert: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  lease_until: number;
  lease_owner: string | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  finished_at: number | null;
}
export interface ThreatModelsTable {
  id: string;
  account_id: string;
  version: number;
  enabled: number;
  definition: string;
  source: string;
  created_at: number;
  updated_at: number;
  /** Set while the current version is suspended for its evaluation cost; a new version clears both. */
  suspended_at: number | null;
  suspended_reason: string | null;
}
export interface ThreatModelVersionsTable {
  account_id: string;
  model_id: string;
  version: number;
  definition: string;
  source: string;
  created_at: number;
}
export interface DashboardSessionsTable {
  id_hash: string;
  account_id: string;
  key_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}
export interface AlertNotesTable {
  id: string;
  account_id: string;
  alert_id: string;
  status: string;
  note: string;
  created_at: number;
  author_kind: string | null;
  author_id: string | null;
  author_label: string | null;
}
export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  totp_secret: string | null;
  totp_enabled_at: number | null;
  totp_last_step: number | null;
  recovery_hashes: string;
  created_at: number;
  password_changed_at: number | null;
  last_sign_in_at: number | null;
}
export interface MembersTable {
  account_id: string;
  user_id: string;
  role: string;
  created_at: number;
  created_by: string | null;
}
export interface MemberTokensTable {
  token_hash: string;
  id: string;
  purpose: string;
  account_id: string | null;
  user_id: string | null;
  email: string | null;
  role: string | null;
  data: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}
export interface MemberSessionsTable {
  id: string;
  id_hash: string;
  account_id: string;
  user_id: string;
  csrf_token: string;
  method: string;
  ip: string | null;
  user_agent: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  revoked_at: number | null;
}
export interface SsoConfigsTable {
  account_id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  allowed_domains: string;
  role_claim: string | null;
  role_map: string;
  default_role: string | null;
  updated_at: number;
}
export interface AuditLogTable {
  id: string;
  account_id: string;
  at: number;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string | null;
  ip: string | null;
  user_agent: string | null;
  action: string;
  target_kind: string | null;
  target_id: string | null;
  changes: string;
  details: string;
}
/** SQLite only: which actors appear in an account's events of an hour (received_at / 1 h). */
export interface EventActorHoursTable {
  account_id: string;
  actor: string;
  hour: number;
}
/** SQLite only: which addresses appear in an account's events of an hour. */
export interface EventIpHoursTable {
  account_id: string;
  address: string;
  hour: number;
}
/** SQLite only: one row counting deletions from the hour summaries. */
export interface EventHoursEpochTable {
  id: number;
  epoch: number;
}
/** Erasure jobs of data subjects: progress and lease (011-subjects). */
export interface SubjectJobsTable {
  id: string;
  account_id: string;
  kind: string;
  status: string;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  /** JSON: each identifier's kind and value hint, never the value. */
  identifiers: string;
  /** JSON: the identifiers themselves while the job is unfinished; null once it ends. */
  pending: string | null;
  suppress_days: number;
  step: string | null;
  done_steps: number;
  total_steps: number;
  counts: string;
  error: string | null;
  lease_owner: string | null;
  lease_until: number;
}
/** The suppression list: keyed hashes of a subject's identifiers, never the identifiers. */
export interface SubjectSuppressionsTable {
  account_id: string;
  hash: string;
  kind: string;
  created_at: number;
  until: number;
}
export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  events: EventsTable;
  alerts: AlertsTable;
  usage_monthly: UsageMonthlyTable;
  usage_daily: UsageDailyTable;
  idempotency: IdempotencyTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  threat_models: ThreatModelsTable;
  threat_model_versions: ThreatModelVersionsTable;
  dashboard_sessions: DashboardSessionsTable;
  alert_notes: AlertNotesTable;
  users: UsersTable;
  members: MembersTable;
  member_tokens: MemberTokensTable;
  member_sessions: MemberSessionsTable;
  sso_configs: SsoConfigsTable;
  audit_log: AuditLogTable;
  event_actor_hours: EventActorHoursTable;
  event_ip_hours: EventIpHoursTable;
  event_hours_epoch: EventHoursEpochTable;
  subject_jobs: SubjectJobsTable;
  subject_suppressions: SubjectSuppressionsTable;
}
