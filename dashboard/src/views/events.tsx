import { useMemo, useState } from 'preact/hooks';
import type { EventDoc } from '../api';
import { EntityLink } from '../links';
import { Table, type Column } from '../list';
import { useLiveTail } from '../live';
import { href } from '../router';
import {
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
import { fmtTime, Loading, Risk } from '../ui';
import { LiveToggle, useLiveRows } from './live-rows';

const PATH = '/events';
/** Filters of the older event links (#/events?ip=…) that keep working beside the query. */
const FILTERS: Readonly<Record<string, string>> = {
  type: 'Type',
  actor_id: 'Actor',
  ip: 'IP address',
  min_risk: 'Minimum risk',
  tag: 'Tag',
  session_id: 'Session',
  host: 'Host',
};
const DEFAULT_SORT = '-occurred_at';

const EXAMPLES: readonly (readonly [string, string])[] = [
  ['type:auth.login.failure AND risk:>=70', 'failed sign-ins scored 70 or more'],
  ['actor_id:*@example.com -type:auth.login.success', 'an actor pattern, without successful sign-ins'],
  ['ip:185.220.101.0/24 OR tag:tor', 'a network or a tag'],
  ['"sqlmap"', 'a phrase anywhere in the event'],
  ['metadata.path:/admin*', 'a metadata key'],
];

function columns(state: SearchState): Column<EventDoc>[] {
  return [
    {
      label: 'Time',
      header: <SortHeader label="Time" field="occurred_at" path={PATH} state={state} fallback={DEFAULT_SORT} />,
      ariaSort: ariaSort('occurred_at', state, DEFAULT_SORT),
      cell: (ev) => (
        <a href={href(`/events/${ev.id}`)} class="nowrap">
          {fmtTime(ev.timestamp)}
        </a>
      ),
    },
    { label: 'Type', cell: (ev) => <span class="mono">{ev.event}</span> },
    { label: 'Actor', cell: (ev) => <EntityLink kind="actor" value={ev.actor_id} /> },
    { label: 'IP', cell: (ev) => <EntityLink kind="ip" value={ev.ip} /> },
    { label: 'Host', cell: (ev) => <EntityLink kind="host" value={ev.host} /> },
    { label: 'Session', cell: (ev) => <EntityLink kind="session" value={ev.session_id} /> },
    {
      label: 'Risk',
      num: true,
      header: <SortHeader label="Risk" field="risk" path={PATH} state={state} fallback={DEFAULT_SORT} />,
      ariaSort: ariaSort('risk', state, DEFAULT_SORT),
      cell: (ev) => (ev.risk ? <Risk score={ev.risk.score} /> : '—'),
    },
    { label: 'Tags', cell: (ev) => ev.tags.join(', ') },
  ];
}

export function EventsView({ params }: { params: URLSearchParams }) {
  const state = searchState(params, Object.keys(FILTERS));
  const page = useSearchPage<EventDoc>('/v1/events', state);
  const [live, setLive] = useState(false);
  const firstPage = !state.cursor && (state.sort ?? DEFAULT_SORT) === DEFAULT_SORT && !state.until;
  const tail = useLiveTail(['events'], filtersAsQuery(state), !(live && firstPage));
  const events = useMemo(() => tail.items.flatMap((i) => (i.kind === 'event' ? [i.event] : [])), [tail.items]);
  const rows = useLiveRows(events, page.data?.data ?? []);
  return (
    <>
      <h1>Events</h1>
      <SearchForm path={PATH} state={state} problem={page.queryProblem} label="Search events" examples={EXAMPLES} />
      <FilterChips path={PATH} state={state} labels={FILTERS} />
      {!page.queryProblem && <HistogramCard endpoint="/v1/events/histogram" path={PATH} state={state} what="Events" />}
      <div class="toolbar">
        <LiveToggle live={live} setLive={setLive} available={firstPage} connected={tail.connected} rows={rows} dropped={tail.dropped} what="events" />
        <ExportLinks endpoint="/v1/events/export" state={state} what="events" />
      </div>
      <Loading error={page.error}>
        {page.data && (
          <>
            <Table caption="Events" columns={columns(state)} rows={rows.shown} rowClass={(ev) => (rows.fresh.has(ev.id) ? 'fresh' : undefined)} />
            {rows.shown.length === 0 && <p class="muted">No event matches this search.</p>}
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
