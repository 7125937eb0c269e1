/**
 * Per-account detection settings: threshold overrides under
 * `settings.detectors` and allowlists under `settings.allowlists`.
 *
 *   detectors:  { "<detector>": { "enabled"?: boolean, "<threshold>"?: number } }
 *   allowlists: { "ips"?: Entry[], "asns"?: Entry[], "actors"?: Entry[], "countries"?: Entry[] }
 *   Entry:      { "value": string | number, "detectors": ["<detector>" | "*", ...], "note"?: string }
 *
 * `validateDetectionSettings` is what PATCH /v1/settings calls (exact messages, normalised value);
 * `compileSettings` turns stored settings into the form the detect stage reads, once per settings
 * object.
 */
import { cidrContains, formatCidr, parseAddress, parseCidr, type Cidr } from '../util/ip.js';
import type { ThresholdSpec } from '../event/classification.js';
import { DETECTOR_SPECS } from './specs.js';
import { memberOf } from '../util/member-of.js';

export type AllowlistKind = 'ips' | 'asns' | 'actors' | 'countries';
export const ALLOWLIST_KINDS: readonly AllowlistKind[] = ['ips', 'asns', 'actors', 'countries'];
export const MAX_ALLOWLIST_ENTRIES = 1000;

export interface AllowlistEntry {
  readonly value: string | number;
  readonly detectors: readonly string[];
  readonly note?: string;
}
export type Allowlists = { readonly [K in AllowlistKind]?: readonly AllowlistEntry[] };
export type DetectorOverrides = Readonly<Record<string, Readonly<Record<string, number | boolean>>>>;

export interface DetectionSettings {
  readonly detectors?: DetectorOverrides;
  readonly allowlists?: Allowlists;
}

export type SettingsValidation = { readonly ok: true; readonly value: DetectionSettings } | { readonly ok: false; readonly errors: readonly string[] };

const SPEC_BY_NAME = new Map(DETECTOR_SPECS.map((s) => [s.name, s]));
const DETECTOR_NAMES = DETECTOR_SPECS.map((s) => s.name);
const ENTRY_FIELDS = new Set(['value', 'detectors', 'note']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates the `detectors` and `allowlists` parts of a settings document. Answers every problem
 * found (one message each, prefixed with its path) or the normalised value (country codes upper
 * case, IPs and CIDRs in canonical form).
 */
export function validateDetectionSettings(input: { readonly detectors?: unknown; readonly allowlists?: unknown }): SettingsValidation {
  const errors: string[] = [];
  const value: { detectors?: DetectorOverrides; allowlists?: Allowlists } = {};
  if (input.detectors !== undefined) {
    const detectors = validateDetectors(input.detectors, errors);
    if (detectors) value.detectors = detectors;
  }
  if (input.allowlists !== undefined) {
    const allowlists = validateAllowlists(input.allowlists, errors);
    if (allowlists) value.allowlists = allowlists;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}

function validateDetectors(input: unknown, errors: string[]): DetectorOverrides | undefined {
  if (!isObject(input)) {
    errors.push('detectors must be an object');
    return undefined;
  }
  const out: Record<string, Record<string, number | boolean>> = {};
  for (const [name, overrides] of Object.entries(input)) {
    const spec = SPEC_BY_NAME.get(name);
    if (spec === undefined) {
      errors.push(`detectors.${name}: unknown detector (known: ${DETECTOR_NAMES.join(', ')})`);
      continue;
    }
    if (!isObject(overrides)) {
      errors.push(`detectors.${name} must be an object`);
      continue;
    }
    const thresholds = new Map((spec.thresholds ?? []).map((th) => [th.name, th]));
    const clean: Record<string, number | boolean> = {};
    for (const [key, v] of Object.entries(overrides)) {
      if (key === 'enabled') {
        if (typeof v === 'boolean') clean[key] = v;
        else errors.push(`detectors.${name}.enabled must be a boolean`);
        continue;
      }
      const th = thresholds.get(key);
      if (th === undefined) {
        const known = ['enabled', ...thresholds.keys()].join(', ');
        errors.push(`detectors.${name}.${key}: unknown setting (known: ${known})`);
        continue;
      }
      if (typeof v !== 'number' || !Number.isInteger(v) || v < th.min || v > th.max) {
        errors.push(`detectors.${name}.${key} must be an integer from ${th.min} to ${th.max}`);
        continue;
      }
      clean[key] = v;
    }
    out[name] = clean;
  }
  return out;
}

function validateAllowlists(input: unknown, errors: string[]): Allowlists | undefined {
  if (!isObject(input)) {
    errors.push('allowlists must be an object');
    return undefined;
  }
  const out: { [K in AllowlistKind]?: AllowlistEntry[] } = {};
  for (const [name, list] of Object.entries(input)) {
    const kind = memberOf(ALLOWLIST_KINDS, name);
    if (kind === undefined) {
      errors.push(`allowlists.${name}: unknown list (known: ${ALLOWLIST_KINDS.join(', ')})`);
      continue;
    }
    if (!Array.isArray(list) || list.length > MAX_ALLOWLIST_ENTRIES) {
      errors.push(`allowlists.${kind} must be an array of at most ${MAX_ALLOWLIST_ENTRIES} entries`);
      continue;
    }
    out[kind] = list.flatMap((entry, i) => {
      const clean = validateEntry(kind, entry, `allowlists.${kind}[${i}]`, errors);
      return clean ? [clean] : [];
    });
  }
  return out;
}

function validateEntry(kind: AllowlistKind, entry: unknown, path: string, errors: string[]): AllowlistEntry | undefined {
  if (!isObject(entry)) {
    errors.push(`${path} must be an object with value and detectors`);
    return undefined;
  }
  const before = errors.length;
  for (const key of Object.keys(entry)) if (!ENTRY_FIELDS.has(key)) errors.push(`${path}.${key}: unknown field (known: value, detectors, note)`);
  const value = validateEntryValue(kind, entry.value, `${path}.value`, errors);
  const detectors = entry.detectors;
  let names: string[] = [];
  if (!Array.isArray(detectors) || detectors.length === 0 || !detectors.every((d) => typeof d === 'string')) {
    errors.push(`${path}.detectors must be a non-empty array of detector names or "*"`);
  } else {
    names = [...new Set(detectors as string[])];
    for (const d of names) if (d !== '*' && !SPEC_BY_NAME.has(d)) errors.push(`${path}.detectors: unknown detector "${d}"`);
  }
  if (entry.note !== undefined && (typeof entry.note !== 'string' || entry.note.length > 200))
    errors.push(`${path}.note must be a string of at most 200 characters`);
  if (errors.length > before || value === undefined) return undefined;
  return entry.note === undefined ? { value, detectors: names } : { value, detectors: names, note: entry.note as string };
}

function validateEntryValue(kind: AllowlistKind, v: unknown, path: string, errors: string[]): string | number | undefined {
  switch (kind) {
    case 'ips': {
      const cidr = typeof v === 'string' ? parseCidr(v.trim()) : undefined;
      if (cidr?.bits === undefined) {
        errors.push(`${path} must be an IP address or CIDR (e.g. 203.0.113.7 or 10.0.0.0/8)`);
        return undefined;
      }
      return formatCidr(Object.assign({}, cidr, { bits: cidr.bits }));
    }
    case 'asns':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 4_294_967_295) {
        errors.push(`${path} must be an integer from 0 to 4294967295`);
        return undefined;
      }
      return v;
    case 'actors':
      if (typeof v !== 'string' || v.length === 0 || v.length > 256) {
        errors.push(`${path} must be a non-empty string of at most 256 characters`);
        return undefined;
      }
      return v;
    case 'countries':
      if (typeof v !== 'string' || !/^[A-Za-z]{2}$/.test(v)) {
        errors.push(`${path} must be a two-letter ISO 3166-1 country code`);
        return undefined;
      }
      return v.toUpperCase();
  }
}

/** An address or CIDR as a range (a bare address is a /32 or /128); IPv4-mapped IPv6 becomes IPv4. */
/** What an event is matched on to find the detectors silenced for it. */
export interface AllowlistSubject {
  readonly ip?: string;
  readonly asn?: number;
  readonly actorId?: string;
  readonly country?: string;
}

/** Silenced detector names; `*` silences all. */
export type Silenced = ReadonlySet<string>;

/** Settings as the detect stage reads them: thresholds resolved for every detector, allowlists indexed. */
export interface CompiledSettings {
  /** Thresholds of a detector with account overrides applied (every documented name present). */
  thresholds(detector: string): Readonly<Record<string, number>>;
  enabled(detector: string): boolean;
  /** Detectors silenced for this event by the allowlists, or null when none. */
  silenced(subject: AllowlistSubject): Silenced | null;
}

const defaultsOf = (thresholds: readonly ThresholdSpec[] | undefined): Record<string, number> =>
  Object.fromEntries((thresholds ?? []).map((th) => [th.name, th.default]));
const DEFAULT_THRESHOLDS = new Map(DETECTOR_SPECS.map((s) => [s.name, Object.freeze(defaultsOf(s.thresholds))]));
const EMPTY: Readonly<Record<string, number>> = Object.freeze({});

export const DEFAULT_SETTINGS: CompiledSettings = {
  thresholds: (detector) => DEFAULT_THRESHOLDS.get(detector) ?? EMPTY,
  enabled: () => true,
  silenced: () => null,
};

const cache = new WeakMap<object, CompiledSettings>();

/**
 * Compiles an account's stored settings, once per settings object (keep the account object
 * between requests to benefit). Parts that fail validation are ignored: stored settings were
 * validated on write.
 */
export function compileSettings(settings: Readonly<Record<string, unknown>> | undefined): CompiledSettings {
  if (settings === undefined || (settings.detectors === undefined && settings.allowlists === undefined)) return DEFAULT_SETTINGS;
  const hit = cache.get(settings);
  if (hit !== undefined) return hit;
  const checked = validateDetectionSettings({ detectors: settings.detectors, allowlists: settings.allowlists });
  const value = checked.ok ? checked.value : {};
  const compiled = compile(value);
  cache.set(settings, compiled);
  return compiled;
}

function compile(value: DetectionSettings): CompiledSettings {
  const thresholds = new Map<string, Readonly<Record<string, number>>>();
  const disabled = new Set<string>();
  for (const spec of DETECTOR_SPECS) {
    const overrides = value.detectors?.[spec.name] ?? {};
    const merged = defaultsOf(spec.thresholds);
    for (const [k, v] of Object.entries(overrides)) {
      if (k === 'enabled') {
        if (v === false) disabled.add(spec.name);
      } else if (typeof v === 'number') merged[k] = v;
    }
    thresholds.set(spec.name, Object.freeze(merged));
  }
  const allow = compileAllowlists(value.allowlists ?? {});
  return {
    thresholds: (detector) => thresholds.get(detector) ?? EMPTY,
    enabled: (detector) => !disabled.has(detector),
    silenced: allow,
  };
}

function compileAllowlists(lists: Allowlists): (subject: AllowlistSubject) => Silenced | null {
  const ranges: { range: Cidr; detectors: readonly string[] }[] = [];
  for (const e of lists.ips ?? []) {
    const range = parseCidr(String(e.value));
    if (range) ranges.push({ range, detectors: e.detectors });
  }
  const byAsn = indexEntries(lists.asns, (v) => Number(v));
  const byActor = indexEntries(lists.actors, (v) => String(v));
  const byCountry = indexEntries(lists.countries, (v) => String(v).toUpperCase());
  if (ranges.length === 0 && byAsn.size === 0 && byActor.size === 0 && byCountry.size === 0) return () => null;
  return (subject) => {
    let out: Set<string> | null = null;
    const add = (names: readonly string[] | undefined) => {
      if (names === undefined) return;
      out ??= new Set();
      for (const n of names) out.add(n);
    };
    if (subject.asn !== undefined) add(byAsn.get(subject.asn));
    if (subject.actorId !== undefined) add(byActor.get(subject.actorId));
    if (subject.country !== undefined) add(byCountry.get(subject.country));
    if (ranges.length > 0 && subject.ip !== undefined) {
      const addr = parseAddress(subject.ip);
      if (addr !== undefined) {
        for (const r of ranges) if (cidrContains(r.range, addr)) add(r.detectors);
      }
    }
    return out;
  };
}

function indexEntries<K>(entries: readonly AllowlistEntry[] | undefined, key: (v: string | number) => K): Map<K, string[]> {
  const map = new Map<K, string[]>();
  for (const e of entries ?? []) {
    const k = key(e.value);
    map.set(k, [...(map.get(k) ?? []), ...e.detectors]);
  }
  return map;
}

/** True when the set silences this detector. */
export const isSilenced = (silenced: Silenced | null, detector: string): boolean => silenced !== null && (silenced.has('*') || silenced.has(detector));
