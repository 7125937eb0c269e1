/** Calls to the service. The session lives in an HttpOnly cookie; the CSRF token only in memory. */

export interface Session {
  readonly account: { readonly id: string; readonly name: string; readonly plan: string; readonly pro: boolean };
  readonly csrf_token: string;
  readonly expires_at: string;
  /** The person signed in and their role; null for a session opened with a key. */
  readonly member?: { readonly id: string; readonly email: string; readonly name: string; readonly role: Role } | null;
}

export type Role = 'viewer' | 'analyst' | 'admin' | 'owner';
export const ROLES: readonly Role[] = ['viewer', 'analyst', 'admin', 'owner'];

/**
 * What a session may do: a person by their role; a session opened with a key does what the key
 * does, but never manages people, and the dashboard leaves data subjects (erasure, export) to
 * people: the session does not know whether its key holds the `subjects` scope.
 */
export type Ability = 'triage' | 'manage' | 'subjects' | 'people' | 'self';
const LEAST_ROLE: Readonly<Record<Ability, Role>> = { triage: 'analyst', manage: 'admin', subjects: 'admin', people: 'admin', self: 'viewer' };
export function can(session: Session, ability: Ability): boolean {
  const member = session.member;
  if (!member) return ability === 'triage' || ability === 'manage';
  return ROLES.indexOf(member.role) >= ROLES.indexOf(LEAST_ROLE[ability]);
}

/** A sign-in that needs the second factor answers a short-lived token for it instead of a session. */
export interface SecondFactorNeeded {
  readonly mfa_required: true;
  readonly mfa_token: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: readonly { field: string; message: string }[] = [],
    /** The service's error code (PLAN_UPGRADE_REQUIRED, INVALID_THREAT_MODEL, …). */
    readonly code = '',
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => {};

export function useSession(session: Session | null, signedOut: () => void): void {
  csrfToken = session?.csrf_token ?? '';
  onSignedOut = signedOut;
}

/**
 * A call whose answer the caller reads itself (a streamed export): the response when it is a
 * success, else the service's refusal as an ApiFailure. `signal` cancels it.
 */
export async function send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', signal });
  if (res.ok) return res;
  const text = await res.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (res.status === 401 && !path.startsWith('/dashboard/api/session') && !path.startsWith('/dashboard/api/sign-in')) onSignedOut();
  throw new ApiFailure(
    res.status,
    String(json.message ?? res.statusText),
    (json.details as { field: string; message: string }[]) ?? [],
    typeof json.error === 'string' ? json.error : '',
  );
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const text = await (await send(method, path, body)).text();
  return (text ? JSON.parse(text) : {}) as T;
}

export const signIn = (key: string) => call<Session>('POST', '/dashboard/api/session', { key });
export const signInWithPassword = (email: string, password: string) =>
  call<Session | SecondFactorNeeded>('POST', '/dashboard/api/sign-in', { email, password });
export const signInSecondFactor = (mfaToken: string, answer: { code: string } | { recovery_code: string }) =>
  call<Session>('POST', '/dashboard/api/sign-in/mfa', { mfa_token: mfaToken, ...answer });
export const signInOptions = (account?: string) => call<{ key_sign_in: boolean; sso: boolean }>('GET', `/dashboard/api/sign-in${query({ account })}`);
/** Starts single sign-on (the instance's, or an account's): the provider's page to go to. */
export const startSingleSignOn = (account?: string) => call<{ redirect: string }>('POST', '/dashboard/api/oidc/start', account ? { account_id: account } : {});
/** The session of this browser, or null when signed out (the service answers 204 then). */
export const currentSession = async (): Promise<Session | null> => {
  const answer = await call<Partial<Session>>('GET', '/dashboard/api/session');
  return answer.account ? (answer as Session) : null;
};
export const signOut = () => call<void>('DELETE', '/dashboard/api/session');

/** Query string from the defined, non-empty values. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A person in the account as the members API answers them. */
export interface Member {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly totp: boolean;
  readonly sso: boolean;
  readonly created_at: string;
  readonly last_sign_in_at: string | null;
}

export interface Invitation {
  readonly id: string;
  readonly email: string;
  readonly role: Role;
  readonly expires_at: string;
  readonly link?: string;
  readonly emailed?: boolean;
}

export interface SessionInfo {
  readonly id: string;
  readonly method: string;
  readonly ip: string | null;
  readonly user_agent: string | null;
  readonly created_at: string;
  readonly last_seen_at: string;
  readonly expires_at: string;
  readonly current?: boolean;
}

export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly actor: { readonly kind: string; readonly id: string | null; readonly label: string };
  readonly ip: string | null;
  readonly user_agent: string | null;
  readonly action: string;
  readonly target: { readonly kind: string; readonly id: string } | null;
  readonly changes: Record<string, { before: unknown; after: unknown }>;
  readonly details: Record<string, unknown>;
}

export interface Page<T> {
  readonly data: readonly T[];
  readonly next_cursor: string | null;
}

export interface BreakdownLine {
  readonly source: string;
  readonly points: number;
}

export interface EventDoc {
  readonly id: string;
  readonly event: string;
  readonly timestamp: string;
  readonly received_at: string;
  readonly actor_id?: string;
  readonly ip?: string;
  readonly user_agent?: string;
  readonly email?: string;
  readonly event_id?: string;
  readonly session_id?: string;
  readonly host?: string;
  readonly device_id?: string;
  readonly request?: {
    readonly method?: string;
    readonly path?: string;
    readonly query?: string;
    readonly status?: number;
    readonly [member: string]: unknown;
  };
  readonly metadata?: Record<string, unknown>;
  readonly tags: readonly string[];
  readonly classification?: { readonly predefined: boolean; readonly base_score: number; readonly families: readonly string[] };
  readonly enrichment?: {
    readonly network?: { readonly ip: string; readonly version: number; readonly scope: string };
    readonly geo?: { readonly country?: string; readonly region?: string; readonly city?: string; readonly accuracy_radius_km?: number };
    readonly asn?: { readonly number: number; readonly organization?: string };
    readonly threat?: { readonly tor_exit: boolean; readonly blocklists: readonly string[]; readonly hosting_asn: boolean };
    readonly user_agent?: {
      readonly browser?: string;
      readonly browser_version?: string;
      readonly os?: string;
      readonly device_type?: string;
      readonly automated: boolean;
      readonly scanner?: string;
    };
    readonly email?: { readonly domain: string; readonly disposable: boolean };
    readonly breached_password?: boolean;
    readonly scan?: readonly { readonly class: string; readonly location: string }[];
  };
  readonly risk?: { readonly score: number; readonly level: string; readonly action: string; readonly breakdown: readonly BreakdownLine[] };
  readonly alerts?: readonly { readonly id: string; readonly type: string; readonly severity: string }[];
}

export type AlertStatus = 'open' | 'acknowledged' | 'resolved' | 'false_positive';

export interface Alert {
  readonly id: string;
  readonly type: string;
  readonly severity: string;
  readonly status: AlertStatus;
  readonly subject: string;
  readonly actor_id: string | null;
  readonly count: number;
  readonly first_seen: string;
  readonly last_seen: string;
  readonly event_ids: readonly string[];
  readonly details: Record<string, unknown>;
  readonly assignee?: { readonly id: string; readonly email: string; readonly name: string } | null;
}

export interface ChainStage {
  readonly stage: string;
  readonly at: string;
  readonly event_id: string | null;
  readonly event_type: string | null;
  readonly alerts: readonly string[];
}

export interface Overview {
  readonly since: string;
  readonly bucket_ms: number;
  /** The range holds more events than the overview reads: its event counts and top lists are those of the newest. */
  readonly events_capped?: boolean;
  readonly events: readonly { at: number; count: number }[];
  readonly alerts: readonly { at: number; count: number }[];
  readonly open_alerts_by_severity: Record<string, number>;
  readonly top_actors: readonly { actor_id: string; count: number; max_risk: number; alerts?: number }[];
  readonly top_ips: readonly { ip: string; count: number; max_risk: number; alerts?: number }[];
  readonly chains_in_progress: readonly {
    id: string;
    type: string;
    severity: string;
    status: string;
    subject: string;
    last_seen: string;
    stages: readonly ChainStage[];
  }[];
}

export interface Usage {
  readonly plan: string;
  readonly period: { readonly start: string; readonly end: string };
  readonly used: number;
  readonly cap: number | null;
  readonly remaining: number | null;
  readonly dropped: number;
  readonly overage_events: number;
  readonly estimated_overage_cost_usd: number | null;
  readonly overage_policy: string;
  readonly daily: readonly { day: string; count: number }[];
}

export interface AllowlistEntry {
  value: string | number;
  detectors: string[];
  note?: string;
}

export interface Settings {
  readonly risk: { challenge?: number; block?: number };
  readonly allowlists: Record<string, AllowlistEntry[]>;
  readonly effective: { readonly risk: { readonly challenge: number; readonly block: number } };
  readonly defaults: { readonly risk: { readonly challenge: number; readonly block: number }; readonly detectors: Record<string, Record<string, number>> };
}

/** A custom threat model as the service answers it: its definition, version and source format. */
export interface ThreatModel {
  readonly id: string;
  readonly version: number;
  readonly name: string;
  readonly description?: string;
  readonly enabled: boolean;
  readonly match: unknown;
  readonly threshold?: unknown;
  readonly sequence?: unknown;
  readonly outcome: { readonly alert: string; readonly severity: string; readonly points?: number; readonly tags?: readonly string[] };
  readonly format: 'native' | 'sigma';
  readonly sigma?: unknown;
  readonly created_at: string;
  readonly updated_at: string;
  /** Set while the service has stopped the model for what it costs to evaluate, with what to do. */
  readonly suspended: null | { readonly at: string; readonly reason: string };
}

export interface ThreatModelVersion {
  readonly version: number;
  readonly created_at: string;
  readonly format: 'native' | 'sigma';
  readonly sigma?: unknown;
  readonly definition: Record<string, unknown>;
}

export interface DryRun {
  readonly range: { readonly from: string; readonly to: string };
  readonly scanned: number;
  readonly matched: number;
  readonly alerts_raised: number;
  readonly truncated: 'rows' | 'time' | null;
  readonly events: readonly { id: string; event: string; timestamp: string; actor_id: string | null; ip: string | null }[];
  readonly alerts: readonly {
    type: string;
    severity: string;
    subject: string;
    count: number;
    first_seen: string;
    last_seen: string;
    event_ids: readonly string[];
  }[];
}

/** An API key as /v1/keys answers it (never the key itself, except once in the answer that made it). */
export interface ApiKey {
  readonly id: string;
  readonly prefix: string;
  readonly kind: 'secret' | 'publishable';
  readonly name: string | null;
  readonly scopes: readonly string[];
  readonly allowed_origins: readonly string[];
  readonly created_at: string;
  readonly revoked_at: string | null;
}

export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string;
  readonly format: 'vigil' | 'ocsf' | 'slack';
  readonly filters: { readonly min_severity: string; readonly alert_types: readonly string[]; readonly kill_chains_only: boolean };
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly previous_secret_expires_at: string | null;
  readonly failing_since: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** One delivery to a webhook endpoint with the endpoint's last answer. */
export interface WebhookDelivery {
  readonly id: string;
  readonly event: string;
  readonly alert_id: string | null;
  readonly status: string;
  readonly attempts: number;
  readonly next_attempt_at: string | null;
  readonly last_attempt_at: string | null;
  readonly last_answer: { readonly status: number | null; readonly error: string | null } | null;
  readonly created_at: string;
  readonly finished_at: string | null;
}
