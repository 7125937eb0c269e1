import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, query, type Alert, type EventDoc, type Page } from '../api';
import { TimeChart } from '../chart';
import { EntityLink, quoted, type EntityKind } from '../links';
import { Table, type Column } from '../list';
import { href } from '../router';
import { apiTime, PRESETS } from '../search';
import { Card, DbIpAttribution, fmtNumber, fmtTime, Loading, Risk, Severity, useLoad } from '../ui';
import { statusLabel } from '../alert-status';
import '../investigate.css';

interface Count {
  readonly value: string;
  readonly count: number;
}

/** An actor, address or host as GET /v1/entities/:kind/:id answers it. */
export interface Entity {
  readonly kind: 'actor' | 'ip' | 'host';
  readonly id: string;
  readonly first_seen: string | null;
  readonly last_seen: string | null;
  readonly events: number;
  readonly alerts: number;
  readonly open_alerts: number;
  readonly max_risk: number;
  readonly risk_over_time: readonly { readonly at: string; readonly max: number; readonly avg: number; readonly count: number }[];
  readonly countries?: readonly Count[];
  readonly devices?: readonly Count[];
  readonly user_agents?: readonly Count[];
  readonly addresses?: readonly Count[];
  readonly actors?: readonly Count[];
  readonly hosts?: readonly Count[];
  readonly sessions?: readonly Count[];
  readonly network?: {
    readonly asn?: number | null;
    readonly org?: string | null;
    readonly country?: string | null;
    readonly network?: string | null;
    readonly feeds?: readonly string[];
    readonly kind?: string | null;
  } | null;
  readonly alerts_recent?: readonly Alert[];
  /** Events the lists beside the counts were drawn from, and whether that was a sample of more. */
  readonly sampled_events?: number;
  /** The window summed up, and the length of one interval of `risk_over_time`. */
  readonly since?: string;
  readonly until?: string;
  readonly bucket_ms?: number;
  readonly partial?: boolean;
}

const TITLES: Readonly<Record<Entity['kind'], string>> = { actor: 'Actor', ip: 'Address', host: 'Host' };
/** The query field that finds an entity's events. */
const EVENT_FIELD: Readonly<Record<Entity['kind'], string>> = { actor: 'actor_id', ip: 'ip', host: 'host' };
const DEFAULT_RANGE = '30d';

/** The events list of an entity (optionally with one more term). */
const eventsHref = (kind: Entity['kind'], id: string, more = '') => href('/events', { q: `${EVENT_FIELD[kind]}:${quoted(id)}${more ? ` ${more}` : ''}` });
/** The alerts list of an entity. */
const alertsQuery = (kind: Entity['kind'], id: string): Record<string, string> =>
  kind === 'actor' ? { actor_id: id } : kind === 'ip' ? { ip: id } : { q: `subject:${quoted(`host:${id}`)}` };

export function EntityView({ kind, id, params }: { kind: Entity['kind']; id: string; params: URLSearchParams }) {
  const range = params.get('since') ?? DEFAULT_RANGE;
  const [now] = useState(() => Date.now());
  const since = apiTime(range, now);
  const { data, error } = useLoad(() => call<Entity>('GET', `/v1/entities/${kind}/${encodeURIComponent(id)}${query({ since })}`), [kind, id, since]);
  useEffect(() => {
    document.title = `${TITLES[kind]} ${id} · Vigil`;
  }, [kind, id]);
  const here = `/${kind}/${encodeURIComponent(id)}`;
  return (
    <>
      <div class="heading">
        <h1>
          {TITLES[kind]} <span class="mono">{id}</span>
        </h1>
        <label>
          Range{' '}
          <select
            value={range}
            onChange={(e) => (location.hash = href(here, { since: e.currentTarget.value === DEFAULT_RANGE ? undefined : e.currentTarget.value }))}
          >
            {PRESETS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Loading error={error}>
        {data && (
          <>
            <Facts entity={data} />
            {data.partial && <p class="small muted">The lists below are drawn from the {fmtNumber(data.sampled_events ?? 0)} most recent events.</p>}
            <div class="grid">
              {kind === 'ip' && <NetworkCard entity={data} />}
              <RiskCard entity={data} />
              <CountList title="Countries" rows={data.countries} render={(v) => <a href={eventsHref(kind, id, `country:${quoted(v)}`)}>{v}</a>} />
              <CountList title="Addresses" rows={data.addresses} render={(v) => <EntityLink kind="ip" value={v} />} />
              <CountList title="Actors" rows={data.actors} render={(v) => <EntityLink kind="actor" value={v} />} />
              <CountList title="Hosts" rows={data.hosts} render={(v) => <EntityLink kind="host" value={v} />} />
              <CountList title="Sessions" rows={data.sessions} render={(v) => <EntityLink kind="session" value={v} />} />
              <CountList
                title="Devices"
                rows={data.devices}
                render={(v) => (
                  <a class="mono" href={eventsHref(kind, id, `device_id:${quoted(v)}`)}>
                    {v}
                  </a>
                )}
              />
              <CountList title="User agents" rows={data.user_agents} render={(v) => <span class="mono small">{v}</span>} />
              <Timeline kind={kind} id={id} since={since} />
            </div>
          </>
        )}
      </Loading>
    </>
  );
}

function Facts({ entity: e }: { entity: Entity }) {
  const facts: [string, ComponentChildren][] = [
    ['First seen', e.first_seen ? fmtTime(e.first_seen) : '—'],
    ['Last seen', e.last_seen ? fmtTime(e.last_seen) : '—'],
    ['Events', <a href={eventsHref(e.kind, e.id)}>{fmtNumber(e.events)}</a>],
    ['Alerts', <a href={href('/alerts', alertsQuery(e.kind, e.id))}>{fmtNumber(e.alerts)}</a>],
    ['Open alerts', <a href={href('/alerts', { ...alertsQuery(e.kind, e.id), status: 'open' })}>{fmtNumber(e.open_alerts)}</a>],
    ['Max risk', e.events > 0 ? <Risk score={e.max_risk} /> : '—'],
  ];
  return (
    <ul class="facts" aria-label="Facts" data-testid="entity-facts">
      {facts.map(([label, value]) => (
        <li key={label}>
          <span class="small muted">{label}</span>
          <strong>{value}</strong>
        </li>
      ))}
    </ul>
  );
}

function NetworkCard({ entity }: { entity: Entity }) {
  const n = entity.network;
  return (
    <Card title="Network">
      {n ? (
        <>
          <dl>
            <dt>Network</dt>
            <dd class="mono">{n.network ? <a href={href('/events', { q: `ip:${n.network}` })}>{n.network}</a> : '—'}</dd>
            <dt>ASN</dt>
            <dd>{n.asn ? `AS${n.asn}` : '—'}</dd>
            <dt>Organization</dt>
            <dd>{n.org || '—'}</dd>
            <dt>Country</dt>
            <dd>{n.country || '—'}</dd>
            {n.kind && (
              <>
                <dt>Kind</dt>
                <dd>{n.kind.replace(/_/g, ' ')}</dd>
              </>
            )}
            <dt>Feeds</dt>
            <dd data-testid="feeds">{n.feeds && n.feeds.length > 0 ? n.feeds.join(', ') : 'not listed'}</dd>
          </dl>
          {n.country && <DbIpAttribution />}
        </>
      ) : (
        <p class="muted">Nothing known about this address's network.</p>
      )}
    </Card>
  );
}

function RiskCard({ entity }: { entity: Entity }) {
  const chart = useMemo(() => {
    const points = entity.risk_over_time;
    // Every interval of the window, so that the time axis is the window's (an interval without events shows 0).
    const step = entity.bucket_ms ?? 0;
    // Intervals start at whole multiples of their length, as the service counts them.
    const start = entity.since && step > 0 ? Math.floor(Date.parse(entity.since) / step) * step : NaN;
    const end = entity.until ? Date.parse(entity.until) : NaN;
    const times =
      step > 0 && start < end && points.length > 0
        ? Array.from({ length: Math.ceil((end - start) / step) }, (_, i) => start + i * step)
        : points.map((p) => Date.parse(p.at));
    const by = new Map(points.map((p) => [Date.parse(p.at), p]));
    return {
      times,
      series: [
        { label: 'Max risk', color: '#dc2626', values: times.map((t) => by.get(t)?.max ?? 0) },
        { label: 'Average risk', color: '#2563eb', values: times.map((t) => Math.round(by.get(t)?.avg ?? 0)) },
      ],
    };
  }, [entity]);
  return (
    <Card title="Risk over time" wide>
      {chart.times.length === 0 ? (
        <p class="muted">No scored events in this range.</p>
      ) : (
        <TimeChart times={chart.times} series={chart.series} label="Highest and average risk per interval" />
      )}
    </Card>
  );
}

function CountList({ title, rows, render }: { title: string; rows: readonly Count[] | undefined; render: (value: string) => ComponentChildren }) {
  if (rows === undefined) return null;
  return (
    <Card title={title}>
      {rows.length === 0 ? (
        <p class="muted">None seen.</p>
      ) : (
        <ul class="plain counts">
          {rows.map((r) => (
            <li key={r.value}>
              <span>{render(r.value)}</span>
              <span class="muted small">{fmtNumber(r.count)}</span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

/** Pages of a list read one after another ("Older"). */
function usePages<T>(endpoint: string, params: Record<string, string | undefined>) {
  const key = `${endpoint}${query(params)}`;
  const [state, setState] = useState<{ key: string; rows: readonly T[]; next: string | null; loading: boolean; error?: string }>({
    key,
    rows: [],
    next: null,
    loading: true,
  });
  const load = (cursor?: string) => {
    setState((s) => ({ ...s, loading: true }));
    call<Page<T>>('GET', `${endpoint}${query({ ...params, cursor, limit: 25 })}`).then(
      (page) => setState((s) => (s.key === key ? { key, rows: cursor ? [...s.rows, ...page.data] : page.data, next: page.next_cursor, loading: false } : s)),
      (err: unknown) => setState((s) => (s.key === key ? { ...s, loading: false, error: err instanceof Error ? err.message : String(err) } : s)),
    );
  };
  useEffect(() => {
    setState({ key, rows: [], next: null, loading: true });
    load();
  }, [key]);
  return { ...state, more: () => state.next && load(state.next) };
}

interface Moment {
  readonly id: string;
  readonly at: string;
  readonly event?: EventDoc;
  readonly alert?: Alert;
}

/**
 * The entity's events and alerts, newest first, merged by time. A row is shown only when no
 * unread page of either list can hold a newer one, so the merge stays in order as pages load.
 */
function Timeline({ kind, id, since }: { kind: Entity['kind']; id: string; since: string | undefined }) {
  const events = usePages<EventDoc>('/v1/events', { q: `${EVENT_FIELD[kind]}:${quoted(id)}`, since });
  const alerts = usePages<Alert>('/v1/alerts', { ...alertsQuery(kind, id), since });
  const rows = useMemo(() => {
    const all: Moment[] = [
      ...events.rows.map((ev) => ({ id: ev.id, at: ev.timestamp, event: ev })),
      ...alerts.rows.map((a) => ({ id: a.id, at: a.last_seen, alert: a })),
    ].sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
    const bounds = [events.next ? events.rows.at(-1)?.timestamp : undefined, alerts.next ? alerts.rows.at(-1)?.last_seen : undefined].filter(
      (t): t is string => t !== undefined,
    );
    const floor = bounds.length > 0 ? Math.max(...bounds.map((t) => Date.parse(t))) : -Infinity;
    return all.filter((m) => Date.parse(m.at) >= floor);
  }, [events.rows, alerts.rows, events.next, alerts.next]);
  const columns: Column<Moment>[] = [
    { label: 'Time', cell: (m) => <span class="nowrap">{fmtTime(m.at)}</span> },
    {
      label: 'What',
      cell: (m) =>
        m.event ? (
          <a class="mono" href={href(`/events/${m.event.id}`)}>
            {m.event.event}
          </a>
        ) : m.alert ? (
          <>
            <Severity level={m.alert.severity} />{' '}
            <a class="mono" href={href(`/alerts/${m.alert.id}`)}>
              {m.alert.type}
            </a>{' '}
            <span class="small muted">{statusLabel(m.alert.status)}</span>
          </>
        ) : null,
    },
    {
      label: 'With',
      cell: (m) =>
        m.event ? (
          <Related kind={kind} ev={m.event} />
        ) : m.alert ? (
          <span class="small">
            {fmtNumber(m.alert.count)} events since {fmtTime(m.alert.first_seen)}
          </span>
        ) : null,
    },
    { label: 'Risk', num: true, cell: (m) => (m.event?.risk ? <Risk score={m.event.risk.score} /> : '') },
  ];
  const error = events.error ?? alerts.error;
  return (
    <Card title="Timeline" wide>
      <Loading error={error}>
        {events.loading && alerts.loading && rows.length === 0 ? undefined : (
          <>
            <Table caption="Events and alerts, newest first" columns={columns} rows={rows} />
            {rows.length === 0 && <p class="muted">No event or alert in this range.</p>}
            {(events.next || alerts.next) && (
              <p>
                <button
                  type="button"
                  class="secondary"
                  disabled={events.loading || alerts.loading}
                  onClick={() => {
                    events.more();
                    alerts.more();
                  }}
                >
                  Older
                </button>
              </p>
            )}
          </>
        )}
      </Loading>
    </Card>
  );
}

/** The other entities of an event, beside the one whose page this is. */
function Related({ kind, ev }: { kind: EntityKind; ev: EventDoc }) {
  const parts: ComponentChildren[] = [];
  if (kind !== 'actor' && ev.actor_id) parts.push(<EntityLink key="a" kind="actor" value={ev.actor_id} />);
  if (kind !== 'ip' && ev.ip) parts.push(<EntityLink key="i" kind="ip" value={ev.ip} />);
  if (kind !== 'host' && ev.host) parts.push(<EntityLink key="h" kind="host" value={ev.host} />);
  if (ev.session_id) parts.push(<EntityLink key="s" kind="session" value={ev.session_id} />);
  return <span class="related">{parts.length === 0 ? '—' : parts.map((p, i) => [i > 0 && ' · ', p])}</span>;
}
