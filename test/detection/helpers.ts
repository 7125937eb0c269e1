/**
 * Test helpers: a stand-in for the catalog's classification (families by type, detectors chosen
 * by family exactly as the catalog says) and a compact way to write enriched events.
 */
import type { Classification, DetectorFamily, InferredType } from '../../src/event/classification.js';
import { DETECTOR_SPECS } from '../../src/detection/specs.js';
import type { Enrichment } from '../../src/event/enrichment.js';
import type { AccountContext } from '../../src/event/account.js';
import type { EnrichedEvent, RequestInfo } from '../../src/event/types.js';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';

const PREFIX_FAMILIES: readonly [string, readonly DetectorFamily[]][] = [
  ['auth.login.', ['authentication', 'credential']],
  ['auth.mfa.', ['authentication', 'credential']],
  ['auth.password.', ['credential', 'account']],
  ['auth.session.', ['session']],
  ['auth.token.', ['session', 'api']],
  ['auth.logout', ['session']],
  ['auth.', ['authentication']],
  ['account.role.changed', ['account', 'privilege']],
  ['account.', ['account']],
  ['data.permission.changed', ['data', 'privilege']],
  ['data.', ['data']],
  ['admin.user.impersonated', ['admin', 'privilege']],
  ['admin.role.', ['admin', 'privilege']],
  ['admin.', ['admin']],
  ['api.', ['api']],
  ['server.network.port_scan_detected', ['perimeter', 'host']],
  ['server.firewall.', ['perimeter', 'host']],
  ['server.', ['host']],
];
const INFERRED_FAMILIES: Readonly<Record<InferredType, readonly DetectorFamily[]>> = {
  'auth.failure': ['authentication', 'credential'],
  'auth.success': ['authentication'],
  'auth.logout': ['session'],
  'data.export': ['data'],
  'account.create': ['account'],
  'account.delete': ['account'],
  'role.change': ['privilege'],
  'mfa.event': ['authentication'],
  'password.event': ['credential'],
  'rate.limited': ['api'],
};

/** What the catalog would answer: families of the type and inferred types, and the detectors they select. */
export function classify(type: string, inferred: readonly InferredType[] = []): Classification {
  const families = new Set<DetectorFamily>();
  const predefined = !type.startsWith('custom.');
  if (predefined) for (const fam of PREFIX_FAMILIES.find(([p]) => type.startsWith(p))?.[1] ?? []) families.add(fam);
  for (const i of inferred) for (const fam of INFERRED_FAMILIES[i]) families.add(fam);
  const detectors = DETECTOR_SPECS.filter((d) => d.generic || (families.size > 0 && d.families.some((fam) => families.has(fam)))).map((d) => d.name);
  return { predefined, baseScore: 0, inferred, families, detectors };
}

export const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);

export interface EventSpec {
  type: string;
  /** ms after T0, or a duration string: `90s`, `5m`, `2h`, `1d`. */
  at?: number | string;
  actor?: string;
  ip?: string;
  session?: string;
  host?: string;
  email?: string;
  ua?: string;
  inferred?: InferredType[];
  request?: RequestInfo;
  metadata?: Record<string, unknown>;
  geo?: { country?: string; lat?: number; lon?: number; radius?: number };
  asn?: number;
  tor?: boolean;
  blocklists?: string[];
  hosting?: boolean;
  disposable?: boolean;
  breached?: boolean;
  scan?: { class: 'sql_injection' | 'xss' | 'path_traversal' | 'command_injection'; location: string }[];
  scanner?: string;
}

/** ms from a number or a duration string such as `90s`, `5m`, `2h`, `1d`, `5d20m`. */
export function duration(v: number | string | undefined): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const parts = [...v.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== v.trim()) throw new Error(`bad duration ${v}`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * (units[p[2] as string] as number), 0);
}

export function enriched(spec: EventSpec, base = T0): EnrichedEvent {
  const at = base + duration(spec.at);
  const enrichment: { -readonly [K in keyof Enrichment]: Enrichment[K] } = {};
  if (spec.geo) enrichment.geo = { country: spec.geo.country, latitude: spec.geo.lat, longitude: spec.geo.lon, accuracyRadiusKm: spec.geo.radius };
  if (spec.asn !== undefined) enrichment.asn = { number: spec.asn };
  if (spec.tor || spec.blocklists || spec.hosting)
    enrichment.threat = { torExit: spec.tor ?? false, blocklists: spec.blocklists ?? [], hostingAsn: spec.hosting ?? false };
  if (spec.ua !== undefined || spec.scanner !== undefined)
    enrichment.userAgent = { family: spec.ua ?? 'Other', automated: spec.scanner !== undefined, ...(spec.scanner ? { scanner: spec.scanner } : {}) };
  if (spec.email !== undefined)
    enrichment.email = { domain: spec.email.split('@')[1] ?? '', normalized: spec.email.toLowerCase(), disposable: spec.disposable ?? false };
  if (spec.breached !== undefined) enrichment.breachedPassword = spec.breached;
  if (spec.scan) enrichment.scan = spec.scan;
  return {
    type: spec.type,
    occurredAt: at,
    receivedAt: at,
    ...(spec.actor !== undefined ? { actorId: spec.actor } : {}),
    ...(spec.ip !== undefined ? { ip: spec.ip } : {}),
    ...(spec.session !== undefined ? { sessionId: spec.session } : {}),
    ...(spec.host !== undefined ? { host: spec.host } : {}),
    ...(spec.email !== undefined ? { email: spec.email } : {}),
    ...(spec.request !== undefined ? { request: spec.request } : {}),
    metadata: spec.metadata ?? {},
    classification: classify(spec.type, spec.inferred ?? []),
    enrichment,
  };
}

export function accountContext(settings: Record<string, unknown> = {}, id = 'acc_test'): AccountContext {
  const plan = DEFAULT_PLANS.business ?? Object.values(DEFAULT_PLANS)[0];
  return {
    account: { id, name: 'Test', plan: 'business', createdAt: 0, settings },
    plan: plan as AccountContext['plan'],
    keyId: 'key_test',
    keyKind: 'secret',
    principal: { kind: 'key', keyId: 'key_test', keyPrefix: 'vgl_sk_test', scopes: ['ingest', 'read', 'manage'] },
  };
}
