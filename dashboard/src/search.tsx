import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiFailure, call, query, type Page } from './api';
import { TimeChart } from './chart';
import { quoted } from './links';
import { href } from './router';
import { fmtNumber, fmtTime, useLoad } from './ui';
import './investigate.css';

/** The time presets of a list: relative to now when the list loads, so a link to "last hour" stays the last hour. */
export const PRESETS: readonly (readonly [string, string])[] = [
  ['15m', 'Last 15 minutes'],
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
];
const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A time in the address (a preset such as `24h`, or a time) as the API takes it: ISO 8601. */
export function apiTime(value: string | undefined, now: number): string | undefined {
  if (!value) return undefined;
  const relative = /^(\d{1,5})([mhd])$/.exec(value);
  if (relative) return new Date(now - Number(relative[1]) * (UNIT_MS[relative[2] as string] as number)).toISOString();
  const at = Date.parse(value);
  return Number.isNaN(at) ? value : new Date(at).toISOString();
}

/** An ISO time as a datetime-local input shows it (local time, to the minute). */
const toLocalInput = (iso: string | undefined): string => {
  const at = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(at)) return '';
  const d = new Date(at - new Date(at).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

/** The list's state as the address holds it (#/events?q=…&since=…): a link reproduces the list. */
export interface SearchState {
  readonly q: string;
  readonly since?: string;
  readonly until?: string;
  readonly sort?: string;
  readonly cursor?: string;
  /** Rows a page holds, when the address says (50 otherwise). */
  readonly limit?: string;
  /** Filters of the older list links (#/events?actor_id=…) that keep working. */
  readonly filters: Readonly<Record<string, string>>;
}

export function searchState(params: URLSearchParams, filterNames: readonly string[]): SearchState {
  const get = (k: string) => params.get(k) || undefined;
  const filters: Record<string, string> = {};
  for (const name of filterNames) {
    const v = get(name);
    if (v) filters[name] = v;
  }
  return { q: params.get('q') ?? '', since: get('since'), until: get('until'), sort: get('sort'), cursor: get('cursor'), limit: get('limit'), filters };
}

/** The address of the list with some of its state changed (a new search starts on the first page). */
export function stateHref(path: string, state: SearchState, change: Partial<SearchState> = {}, extra: Record<string, string | undefined> = {}): string {
  const next = { ...state, cursor: undefined, ...change };
  return href(path, {
    ...next.filters,
    ...extra,
    q: next.q || undefined,
    since: next.since,
    until: next.until,
    sort: next.sort,
    limit: next.limit,
    cursor: next.cursor,
  });
}

/** The API's query parameters for the state, times resolved now. */
export function apiQuery(state: SearchState, now: number): Record<string, string | undefined> {
  return { ...state.filters, q: state.q.trim() || undefined, since: apiTime(state.since, now), until: apiTime(state.until, now), sort: state.sort };
}

/** The message of a refused query, when the service refused the query text itself. */
export function queryError(error: unknown): string | undefined {
  if (!(error instanceof ApiFailure) || error.status !== 400) return undefined;
  const line = error.details.find((d) => d.field === 'q' || d.field.endsWith('/q') || d.field.endsWith('.q'));
  return line?.message ?? (error.details.length === 0 ? error.message : error.details.map((d) => `${d.field}: ${d.message}`).join('; '));
}

/** Loads a page of a searchable list; a refused query comes back as `queryProblem` rather than a failure. */
export function useSearchPage<T>(endpoint: string, state: SearchState, extra: Record<string, string | undefined> = {}) {
  const [now] = useState(() => Date.now());
  const params = { ...apiQuery(state, now), ...extra, cursor: state.cursor, limit: state.limit ?? 50 };
  const q = query(params);
  const [problem, setProblem] = useState<string | undefined>();
  const result = useLoad(async () => {
    try {
      const page = await call<Page<T>>('GET', `${endpoint}${q}`);
      setProblem(undefined);
      return page;
    } catch (err) {
      const message = queryError(err);
      setProblem(message);
      if (message !== undefined) return { data: [], next_cursor: null } as Page<T>;
      throw err;
    }
  }, [q]);
  return { ...result, queryProblem: problem, params };
}

/**
 * The search box with the query grammar's help, and the time picker (presets and a custom range).
 * `problem` is the service's message for a refused query, shown under the box; the box keeps focus.
 */
export function SearchForm({
  path,
  state,
  problem,
  label,
  examples,
  keep = {},
}: {
  path: string;
  state: SearchState;
  problem?: string;
  label: string;
  examples: readonly (readonly [string, string])[];
  /** More of the address that a new search keeps (the alerts' grouping). */
  keep?: Record<string, string | undefined>;
}) {
  const input = useRef<HTMLInputElement>(null);
  const preset =
    state.since === undefined && state.until === undefined ? '' : PRESETS.some(([v]) => v === state.since) && !state.until ? state.since : 'custom';
  const [range, setRange] = useState(preset);
  useEffect(() => setRange(preset), [preset]);
  useEffect(() => {
    if (problem && input.current) {
      input.current.focus();
      // The service counts positions from 1; the caret goes before the character it names.
      const at = /position (\d+)/.exec(problem);
      if (at) input.current.setSelectionRange(Number(at[1]) - 1, Number(at[1]) - 1);
    }
  }, [problem]);
  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const q = String(form.get('q') ?? '').trim();
    const chosen = String(form.get('range') ?? '');
    let since: string | undefined = chosen || undefined;
    let until: string | undefined;
    if (chosen === 'custom') {
      const from = String(form.get('from') ?? '');
      const to = String(form.get('to') ?? '');
      since = from ? new Date(from).toISOString() : undefined;
      until = to ? new Date(to).toISOString() : undefined;
    }
    const next = stateHref(path, state, { q, since, until }, keep);
    if (next === location.hash) dispatchEvent(new HashChangeEvent('hashchange'));
    else location.hash = next;
  };
  const describedBy = problem ? `${path.slice(1)}-q-problem ${path.slice(1)}-q-help` : `${path.slice(1)}-q-help`;
  return (
    <form class="search" role="search" aria-label={label} onSubmit={submit}>
      <div class="search-row">
        <label class="grow">
          Query
          <input
            ref={input}
            name="q"
            type="search"
            defaultValue={state.q}
            key={state.q}
            maxLength={1000}
            spellcheck={false}
            autocomplete="off"
            class="mono"
            aria-invalid={problem ? true : undefined}
            aria-describedby={describedBy}
            placeholder="type:auth.login.failure AND risk:>=70"
          />
        </label>
        <label>
          Time
          <select name="range" value={range} onChange={(e) => setRange(e.currentTarget.value)}>
            <option value="">Any time</option>
            {PRESETS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
            <option value="custom">Custom range</option>
          </select>
        </label>
        {range === 'custom' && (
          <>
            <label>
              From
              <input name="from" type="datetime-local" defaultValue={toLocalInput(preset === 'custom' ? apiTime(state.since, Date.now()) : undefined)} />
            </label>
            <label>
              Until
              <input name="to" type="datetime-local" defaultValue={toLocalInput(preset === 'custom' ? apiTime(state.until, Date.now()) : undefined)} />
            </label>
          </>
        )}
        <div class="actions">
          <button type="submit">Search</button>
          <a class="button secondary" href={`#${path}`}>
            Clear
          </a>
        </div>
      </div>
      {problem && (
        <p class="error" role="alert" id={`${path.slice(1)}-q-problem`} data-testid="query-problem">
          {problem}
        </p>
      )}
      <details class="query-help" id={`${path.slice(1)}-q-help`}>
        <summary>Query syntax</summary>
        <p class="small">
          <code>field:value</code>, <code>field:"quoted value"</code>, wildcards <code>*</code> and <code>?</code>, ranges <code>risk:&gt;=70</code> or{' '}
          <code>risk:[40 TO 80]</code>, CIDR <code>ip:10.0.0.0/8</code>, <code>AND</code>, <code>OR</code>, <code>NOT</code> or <code>-</code>, parentheses;
          terms side by side must all match; bare words search the text.
        </p>
        <ul class="plain small">
          {examples.map(([q, what]) => (
            <li key={q}>
              <a class="mono" href={stateHref(path, state, { q }, keep)}>
                {q}
              </a>{' '}
              — {what}
            </li>
          ))}
        </ul>
      </details>
    </form>
  );
}

/** The filters of the older list links (#/events?actor_id=…), each removable. */
export function FilterChips({ path, state, labels }: { path: string; state: SearchState; labels: Readonly<Record<string, string>> }) {
  const entries = Object.entries(state.filters);
  if (entries.length === 0) return null;
  return (
    <ul class="chips" aria-label="Filters">
      {entries.map(([name, value]) => {
        const rest = { ...state.filters };
        delete rest[name];
        return (
          <li key={name}>
            {labels[name] ?? name}: <span class="mono">{value}</span>{' '}
            <a href={stateHref(path, state, { filters: rest })} aria-label={`Remove the filter ${labels[name] ?? name}`}>
              ×
            </a>
          </li>
        );
      })}
    </ul>
  );
}

/** The older filters as terms of the query language, for what only takes a query (the live stream). */
export function filtersAsQuery(state: SearchState): string {
  const terms: string[] = [];
  for (const [name, value] of Object.entries(state.filters)) {
    if (name === 'min_risk') terms.push(`risk:>=${Number(value) || 0}`);
    else if (name === 'type') terms.push(`type:${value.endsWith('*') ? value : quoted(value)}`);
    else if (['actor_id', 'ip', 'tag', 'status', 'severity'].includes(name)) terms.push(`${name}:${quoted(value)}`);
  }
  const q = state.q.trim();
  return [q && terms.length > 0 ? `(${q})` : q, ...terms].filter(Boolean).join(' ');
}

interface Histogram {
  readonly bucket_ms: number;
  readonly since: string;
  readonly until: string;
  readonly buckets: readonly { readonly at: string; readonly count: number }[];
}

/** How many matched per interval of the list's time (event time for events, first seen for alerts); dragging over bars or clicking one narrows the range to it. */
export function HistogramCard({ endpoint, path, state, what }: { endpoint: string; path: string; state: SearchState; what: string }) {
  const [now] = useState(() => Date.now());
  const q = query({ ...apiQuery({ ...state, sort: undefined }, now), buckets: 60 });
  const { data } = useLoad(() => call<Histogram>('GET', `${endpoint}${q}`).catch(() => undefined), [q]);
  const chart = useMemo(
    () =>
      data
        ? { times: data.buckets.map((b) => Date.parse(b.at)), series: [{ label: what, color: '#2563eb', values: data.buckets.map((b) => b.count) }] }
        : undefined,
    [data],
  );
  if (!data || !chart) return null;
  const total = data.buckets.reduce((n, b) => n + b.count, 0);
  const zoom = (from: number, to: number) => {
    const start = Math.max(Date.parse(data.since), Math.floor(from / data.bucket_ms) * data.bucket_ms);
    const end = Math.min(Date.parse(data.until), Math.max(start + data.bucket_ms, Math.ceil(to / data.bucket_ms) * data.bucket_ms));
    location.hash = stateHref(path, state, { since: new Date(start).toISOString(), until: new Date(end).toISOString() });
  };
  return (
    <section class="card histogram" aria-labelledby={`${path.slice(1)}-histogram`} data-testid="histogram">
      <h2 id={`${path.slice(1)}-histogram`}>
        {fmtNumber(total)} {what.toLowerCase()} from {fmtTime(data.since)} to {fmtTime(data.until)}
      </h2>
      <TimeChart
        times={chart.times}
        series={chart.series}
        label={`${what} per ${describeInterval(data.bucket_ms)}`}
        bars
        onSelect={zoom}
        bucketMs={data.bucket_ms}
        // One series, named by the heading: a legend would only repeat it (as a table of its own).
        legend={false}
      />
      <p class="small muted">Drag across bars or click one to narrow the time range.</p>
    </section>
  );
}

function describeInterval(ms: number): string {
  if (ms % 86_400_000 === 0) return ms === 86_400_000 ? 'day' : `${ms / 86_400_000} days`;
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  return `${Math.round(ms / 1000)} seconds`;
}

/** Downloads of the whole result (not only the page shown): the browser saves what the export endpoint streams. */
export function ExportLinks({ endpoint, state, what }: { endpoint: string; state: SearchState; what: string }) {
  const [now] = useState(() => Date.now());
  const params = apiQuery(state, now);
  return (
    <span class="exports">
      <a class="button secondary" href={`${endpoint}${query({ ...params, format: 'csv' })}`} download>
        Export CSV<span class="visually-hidden"> of the {what}</span>
      </a>
      <a class="button secondary" href={`${endpoint}${query({ ...params, format: 'ndjson' })}`} download>
        Export NDJSON<span class="visually-hidden"> of the {what}</span>
      </a>
    </span>
  );
}

/** A column header that sorts the list: descending first, then ascending. */
export function SortHeader({ label, field, path, state, fallback }: { label: string; field: string; path: string; state: SearchState; fallback: string }) {
  const current = state.sort ?? fallback;
  const active = current === field || current === `-${field}`;
  const descending = current === `-${field}`;
  const next = active && descending ? field : `-${field}`;
  return (
    <a href={stateHref(path, state, { sort: next === fallback ? undefined : next })} class="sort">
      {label}
      <span aria-hidden="true">{active ? (descending ? ' ▼' : ' ▲') : ' ↕'}</span>
      <span class="visually-hidden">{active ? (descending ? ', sorted newest or highest first' : ', sorted oldest or lowest first') : ', sort'}</span>
    </a>
  );
}

export const ariaSort = (field: string, state: SearchState, fallback: string): 'ascending' | 'descending' | undefined => {
  const current = state.sort ?? fallback;
  return current === field ? 'ascending' : current === `-${field}` ? 'descending' : undefined;
};
