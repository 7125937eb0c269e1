import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiFailure, call, query, type Alert, type AlertStatus, type Page } from '../api';
import { STATUSES, statusLabel } from '../alert-status';
import { EntityLink, quoted, SubjectLink } from '../links';
import { Table, type Column } from '../list';
import { useLiveTail } from '../live';
import { href } from '../router';
import {
  apiQuery,
  ariaSort,
  ExportLinks,
  FilterChips,
  filtersAsQuery,
  HistogramCard,
  SearchForm,
  searchState,
  SortHeader,
  stateHref,
  useSearchPage,
  type SearchState,
} from '../search';
import { useCan, useSessionInfo } from '../session';
import { fmtNumber, fmtTime, FormError, Loading, Severity, useLoad } from '../ui';
import { LiveToggle, useLiveRows } from './live-rows';

const PATH = '/alerts';
const FILTERS: Readonly<Record<string, string>> = {
  status: 'Status',
  severity: 'Severity',
  type: 'Alert type',
  assignee: 'Assignee',
  actor_id: 'Actor',
  ip: 'IP address',
};
const DEFAULT_SORT = '-last_seen';
const SEVERITIES = ['critical', 'high', 'medium', 'low'];
/** The alert's events a row links to: a query of their ids stays within the query's 32 terms. */
const LINKED_EVENTS = 30;

const EXAMPLES: readonly (readonly [string, string])[] = [
  ['type:auth.* AND severity:critical', 'critical sign-in alerts'],
  ['status:open -assignee:*', 'open and nobody on them'],
  ['subject:"ip:185.220.101.4"', 'about one address'],
  ['actor_id:*@example.com', 'an actor pattern'],
];

/** An alert campaign as GET /v1/alerts/groups answers it. */
interface Group {
  readonly key: string;
  readonly type: string;
  readonly severity: string;
  readonly count: number;
  readonly events: number;
  readonly first_seen: string;
  readonly last_seen: string;
  readonly shared: { readonly by: 'source' | 'network' | 'target'; readonly value: string };
  readonly subjects: readonly string[];
  readonly statuses: Readonly<Record<string, number>>;
  readonly alert_ids: readonly string[];
}

interface BulkAnswer {
  readonly updated: number;
  readonly unchanged: number;
  readonly not_found: readonly string[];
}

/** The events behind an alert, as a query of the events list (an alert keeps its most recent event ids). */
export const alertEventsHref = (a: Alert): string =>
  href('/events', {
    q:
      a.event_ids
        .slice(-LINKED_EVENTS)
        .map((id) => `id:${quoted(id)}`)
        .join(' OR ') || undefined,
  });

export function AlertsView({ params }: { params: URLSearchParams }) {
  const state = searchState(params, Object.keys(FILTERS));
  const grouped = params.get('group') === 'campaign';
  const triage = useCan('triage');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [tick, setTick] = useState(0);
  const [problem, setProblem] = useState<string | undefined>();
  const [done, setDone] = useState('');
  const listKey = `${stateHref(PATH, state)}|${grouped}`;
  useEffect(() => setSelected(new Set()), [listKey]);
  const groupHref = (on: boolean) => stateHref(PATH, state, {}, { group: on ? 'campaign' : undefined });
  return (
    <>
      <div class="heading">
        <h1>Alerts</h1>
        <a class="button secondary" href={groupHref(!grouped)} aria-pressed={grouped} role="button">
          Group by campaign
        </a>
      </div>
      <SearchForm
        path={PATH}
        state={state}
        problem={grouped ? undefined : problem}
        label="Search alerts"
        examples={EXAMPLES}
        keep={{ group: grouped ? 'campaign' : undefined }}
      />
      <QuickFilters state={state} grouped={grouped} />
      <FilterChips path={PATH} state={{ ...state, filters: pick(state.filters, ['type', 'actor_id', 'ip']) }} labels={FILTERS} />
      {triage && selected.size > 0 && (
        <BulkBar
          selected={selected}
          grouped={grouped}
          onDone={(message) => {
            setSelected(new Set());
            setDone(message);
            setTick((t) => t + 1);
          }}
        />
      )}
      <p role="status" class="ok" data-testid="bulk-done">
        {done}
      </p>
      {grouped ? (
        <Groups key={tick} state={state} triage={triage} selected={selected} setSelected={setSelected} />
      ) : (
        <AlertRows key={tick} state={state} triage={triage} selected={selected} setSelected={setSelected} onProblem={setProblem} />
      )}
    </>
  );
}

const pick = (o: Readonly<Record<string, string>>, keys: readonly string[]): Record<string, string> =>
  Object.fromEntries(Object.entries(o).filter(([k]) => keys.includes(k)));

/** Status, severity and assignee: applied as soon as one is chosen. */
function QuickFilters({ state, grouped }: { state: SearchState; grouped: boolean }) {
  const person = useSessionInfo()?.member;
  const set = (name: string, value: string) => {
    const filters = { ...state.filters };
    if (value) filters[name] = value;
    else delete filters[name];
    location.hash = stateHref(PATH, state, { filters }, { group: grouped ? 'campaign' : undefined });
  };
  const select = (name: string, label: string, options: readonly (readonly [string, string])[]) => (
    <label>
      {label}
      <select value={state.filters[name] ?? ''} onChange={(e) => set(name, e.currentTarget.value)}>
        <option value="">Any</option>
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div class="filters" role="group" aria-label="Alert filters">
      {select('status', 'Status', STATUSES)}
      {!grouped &&
        select(
          'severity',
          'Severity',
          SEVERITIES.map((s) => [s, s] as const),
        )}
      {!grouped &&
        person &&
        select('assignee', 'Assignee', [
          ['me', 'Mine'],
          ['unassigned', 'Unassigned'],
        ])}
    </div>
  );
}

interface Selection {
  readonly triage: boolean;
  readonly selected: ReadonlySet<string>;
  readonly setSelected: (s: ReadonlySet<string>) => void;
}

function toggle(set: ReadonlySet<string>, ids: readonly string[], on: boolean): ReadonlySet<string> {
  const next = new Set(set);
  for (const id of ids) {
    if (on) next.add(id);
    else next.delete(id);
  }
  return next;
}

/** The select column: a box per row and one for every row shown. */
function selectColumn<T extends { id: string }>(rows: readonly T[], sel: Selection, name: (row: T) => string, all: string): Column<T> {
  const every = rows.length > 0 && rows.every((r) => sel.selected.has(r.id));
  return {
    label: 'Select',
    header: (
      <input
        type="checkbox"
        aria-label={all}
        checked={every}
        disabled={rows.length === 0}
        onChange={(e) =>
          sel.setSelected(
            toggle(
              sel.selected,
              rows.map((r) => r.id),
              e.currentTarget.checked,
            ),
          )
        }
      />
    ),
    cell: (row) => (
      <input
        type="checkbox"
        aria-label={`Select ${name(row)}`}
        checked={sel.selected.has(row.id)}
        onChange={(e) => sel.setSelected(toggle(sel.selected, [row.id], e.currentTarget.checked))}
      />
    ),
  };
}

function AlertRows({ state, onProblem, ...sel }: { state: SearchState; onProblem: (problem: string | undefined) => void } & Selection) {
  const page = useSearchPage<Alert>('/v1/alerts', state);
  useEffect(() => onProblem(page.queryProblem), [page.queryProblem]);
  const [live, setLive] = useState(false);
  const firstPage = !state.cursor && (state.sort ?? DEFAULT_SORT) === DEFAULT_SORT && !state.until;
  const tail = useLiveTail(['alerts'], filtersAsQuery(state), !(live && firstPage));
  const pageRows = page.data?.data ?? [];
  const rows = useLiveRows(
    // A sighting carries no status or assignee: those of the row on the page stay.
    useMemo(() => {
      const onPage = new Map(pageRows.map((a) => [a.id, a]));
      return tail.items.flatMap((i): Alert[] =>
        i.kind === 'alert'
          ? [{ ...i.alert, status: i.alert.status ?? onPage.get(i.alert.id)?.status ?? 'open', assignee: onPage.get(i.alert.id)?.assignee ?? null }]
          : [],
      );
    }, [tail.items, pageRows]),
    pageRows,
  );
  const columns: Column<Alert>[] = [
    ...(sel.triage ? [selectColumn(rows.shown, sel, (a) => `${a.type} ${a.subject}`, 'Select every alert shown')] : []),
    {
      label: 'Alert',
      cell: (a) => (
        <a class="mono" href={href(`/alerts/${a.id}`)}>
          {a.type}
        </a>
      ),
    },
    {
      label: 'Severity',
      header: <SortHeader label="Severity" field="severity" path={PATH} state={state} fallback={DEFAULT_SORT} />,
      ariaSort: ariaSort('severity', state, DEFAULT_SORT),
      cell: (a) => <Severity level={a.severity} />,
    },
    { label: 'Status', cell: (a) => statusLabel(a.status) },
    { label: 'Subject', cell: (a) => <SubjectLink subject={a.subject} /> },
    { label: 'Actor', cell: (a) => <EntityLink kind="actor" value={a.actor_id} /> },
    { label: 'Assignee', cell: (a) => a.assignee?.email ?? '—' },
    {
      label: 'Events',
      num: true,
      cell: (a) => (
        <a href={alertEventsHref(a)}>
          {fmtNumber(a.count)}
          <span class="visually-hidden"> events</span>
        </a>
      ),
    },
    {
      label: 'Last seen',
      header: <SortHeader label="Last seen" field="last_seen" path={PATH} state={state} fallback={DEFAULT_SORT} />,
      ariaSort: ariaSort('last_seen', state, DEFAULT_SORT),
      cell: (a) => <span class="nowrap">{fmtTime(a.last_seen)}</span>,
    },
  ];
  return (
    <>
      {!page.queryProblem && <HistogramCard endpoint="/v1/alerts/histogram" path={PATH} state={state} what="Alerts" />}
      <div class="toolbar">
        <LiveToggle live={live} setLive={setLive} available={firstPage} connected={tail.connected} rows={rows} dropped={tail.dropped} what="alerts" />
        <ExportLinks endpoint="/v1/alerts/export" state={state} what="alerts" />
      </div>
      <Loading error={page.error}>
        {page.data && (
          <>
            <Table caption="Alerts" columns={columns} rows={rows.shown} rowClass={(a) => (rows.fresh.has(a.id) ? 'fresh' : undefined)} />
            {rows.shown.length === 0 && <p class="muted">No alert matches this search.</p>}
            <nav class="pager" aria-label="Pages">
              {state.cursor && <a href={stateHref(PATH, state)}>First page</a>}
              {page.data.next_cursor && <a href={stateHref(PATH, state, { cursor: page.data.next_cursor })}>Next page</a>}
            </nav>
          </>
        )}
      </Loading>
    </>
  );
}

/** Where a campaign's alerts are listed. */
function groupAlertsHref(g: Group): string {
  if (g.shared.by === 'source' || g.shared.by === 'network') return href(PATH, { type: g.type, ip: g.shared.value });
  return href(PATH, { type: g.type, q: g.subjects.map((s) => `subject:${quoted(s)}`).join(' OR ') || undefined });
}

function Groups({ state, ...sel }: { state: SearchState } & Selection) {
  const [now] = useState(() => Date.now());
  const api = apiQuery(state, now);
  const q = query({ status: api.status, type: api.type, since: api.since, until: api.until, cursor: state.cursor });
  const { data, error } = useLoad(() => call<Page<Group>>('GET', `/v1/alerts/groups${q}`), [q]);
  const rows = (data?.data ?? []).map((g) => ({ ...g, id: g.key }));
  const SHARED: Readonly<Record<string, string>> = { source: 'Source', network: 'Network', target: 'Target' };
  const columns: Column<Group & { id: string }>[] = [
    ...(sel.triage
      ? [
          selectColumn(
            rows,
            sel,
            (g) => `the campaign ${g.type} ${SHARED[g.shared.by] ?? g.shared.by} ${g.shared.value} (${g.count} alerts)`,
            'Select every campaign shown',
          ),
        ]
      : []),
    {
      label: 'Campaign',
      cell: (g) => (
        <>
          <span class="mono">{g.type}</span> <Severity level={g.severity} />
        </>
      ),
    },
    {
      label: 'Shared',
      cell: (g) => (
        <>
          <span class="small muted">{SHARED[g.shared.by] ?? g.shared.by}</span>{' '}
          {g.shared.by === 'source' ? (
            <EntityLink kind="ip" value={g.shared.value} />
          ) : g.shared.by === 'network' ? (
            <a class="mono nowrap" href={href('/events', { q: `ip:${g.shared.value}` })}>
              {g.shared.value}
            </a>
          ) : (
            <span class="mono">{g.shared.value}</span>
          )}
        </>
      ),
    },
    {
      label: 'Alerts',
      num: true,
      cell: (g) => (
        <a href={groupAlertsHref(g)} aria-label={`${fmtNumber(g.count)} alerts of the campaign ${g.type} ${g.shared.value}`}>
          {fmtNumber(g.count)}
        </a>
      ),
    },
    { label: 'Events', num: true, cell: (g) => fmtNumber(g.events) },
    {
      label: 'Subjects',
      cell: (g) => (
        <span class="small">
          {g.subjects.slice(0, 3).map((s, i) => [i > 0 && ', ', <SubjectLink key={s} subject={s} />])}
          {g.count > 3 && ` and ${fmtNumber(g.count - Math.min(3, g.subjects.length))} more`}
        </span>
      ),
    },
    {
      label: 'Statuses',
      cell: (g) => (
        <span class="small">
          {Object.entries(g.statuses)
            .filter(([, n]) => n > 0)
            .map(([s, n]) => `${statusLabel(s)} ${fmtNumber(n)}`)
            .join(', ')}
        </span>
      ),
    },
    { label: 'First seen', cell: (g) => <span class="nowrap">{fmtTime(g.first_seen)}</span> },
    { label: 'Last seen', cell: (g) => <span class="nowrap">{fmtTime(g.last_seen)}</span> },
  ];
  return (
    <Loading error={error}>
      {data && (
        <>
          <Table caption="Alert campaigns" columns={columns} rows={rows} />
          {rows.length === 0 && <p class="muted">No campaign in this range.</p>}
          <nav class="pager" aria-label="Pages">
            {state.cursor && <a href={stateHref(PATH, state, {}, { group: 'campaign' })}>First page</a>}
            {data.next_cursor && <a href={stateHref(PATH, state, { cursor: data.next_cursor }, { group: 'campaign' })}>Next page</a>}
          </nav>
        </>
      )}
    </Loading>
  );
}

/** Status, note and assignee for every selected alert (or every alert of the selected campaigns) at once. */
function BulkBar({ selected, grouped, onDone }: { selected: ReadonlySet<string>; grouped: boolean; onDone: (message: string) => void }) {
  const me = useSessionInfo()?.member;
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const status = String(form.get('status') ?? '') as AlertStatus | '';
    const note = String(form.get('note') ?? '').trim();
    const assignee = String(form.get('assignee') ?? '');
    const change = {
      ...(status ? { status } : {}),
      ...(note ? { note } : {}),
      ...(assignee === 'me' && me ? { assignee: me.id } : assignee === 'nobody' ? { assignee: null } : {}),
    };
    if (Object.keys(change).length === 0) {
      setError('Choose a status, a note or an assignee.');
      return;
    }
    setBusy(true);
    setError('');
    try {
      const targets = grouped ? [...selected].map((group) => ({ group })) : [{ ids: [...selected] }];
      let updated = 0;
      let unchanged = 0;
      for (const target of targets) {
        const answer = await call<BulkAnswer>('POST', '/v1/alerts/bulk', { ...target, ...change });
        updated += answer.updated;
        unchanged += answer.unchanged;
      }
      onDone(`${fmtNumber(updated)} alerts changed, ${fmtNumber(unchanged)} already so.`);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="bulk" onSubmit={submit} aria-label="Change the selected alerts">
      <strong>
        {fmtNumber(selected.size)} {grouped ? (selected.size === 1 ? 'campaign' : 'campaigns') : selected.size === 1 ? 'alert' : 'alerts'} selected
      </strong>
      <label>
        Status
        <select name="status" defaultValue="">
          <option value="">Unchanged</option>
          {STATUSES.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <label>
        Note
        <input name="note" maxLength={2000} />
      </label>
      <label>
        Assignee
        <select name="assignee" defaultValue="">
          <option value="">Unchanged</option>
          {me && <option value="me">Me</option>}
          <option value="nobody">Nobody</option>
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Apply to selected
      </button>
      <FormError error={error} />
    </form>
  );
}
