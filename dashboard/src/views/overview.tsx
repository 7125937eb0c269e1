import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, type Overview } from '../api';
import { TimeChart } from '../chart';
import { EntityLink, type EntityKind } from '../links';
import { href } from '../router';
import { Card, fmtNumber, fmtTime, Loading, Risk, Severity, useLoad } from '../ui';

const SEVERITIES = ['critical', 'high', 'medium', 'low'];
const REFRESH_MS = 30_000;

export function OverviewView() {
  const [range, setRange] = useState('24h');
  const { data, error, reload } = useLoad(() => call<Overview>('GET', `/dashboard/api/overview?range=${range}`), [range]);
  // What is being attacked right now: the overview refreshes itself while it is open.
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [range]);
  const chart = useMemo(() => {
    if (!data) return undefined;
    const start = Date.parse(data.since);
    const n = Math.ceil((Date.now() - start) / data.bucket_ms);
    const times = Array.from({ length: n }, (_, i) => start + i * data.bucket_ms);
    const fill = (points: readonly { at: number; count: number }[]) => {
      const by = new Map(points.map((p) => [p.at, p.count]));
      return times.map((t) => by.get(t) ?? 0);
    };
    return {
      times,
      series: [
        { label: 'Events', color: '#2563eb', values: fill(data.events) },
        { label: 'Alerts', color: '#dc2626', values: fill(data.alerts) },
      ],
    };
  }, [data]);
  return (
    <>
      <div class="heading">
        <h1>Overview</h1>
        <div class="actions">
          <button type="button" class="secondary" onClick={reload}>
            Refresh
          </button>
          <label>
            Range{' '}
            <select value={range} onChange={(e) => setRange((e.currentTarget as HTMLSelectElement).value)}>
              <option value="24h">Last 24 hours</option>
              <option value="7d">Last 7 days</option>
              <option value="30d">Last 30 days</option>
            </select>
          </label>
        </div>
      </div>
      <Loading error={error}>
        {data && chart && (
          <div class="grid">
            <Card title="Events and alerts over time" wide>
              <TimeChart times={chart.times} series={chart.series} label="Events and alerts per interval" />
              {data.events_capped === true && (
                <p class="muted" role="note">
                  This range holds more events than the overview reads: the event counts and the riskiest actors and addresses are those of its newest 50,000
                  events. <a href={href('/events')}>Search the events</a> for the whole range.
                </p>
              )}
            </Card>
            <Card title="Open alerts by severity">
              <ul class="severities">
                {SEVERITIES.map((s) => (
                  <li key={s}>
                    <a href={href('/alerts', { severity: s, status: 'open' })}>
                      <Severity level={s} /> <strong>{fmtNumber(data.open_alerts_by_severity[s] ?? 0)}</strong>
                    </a>
                  </li>
                ))}
              </ul>
            </Card>
            <Card title="Kill chains in progress">
              {data.chains_in_progress.length === 0 ? (
                <p class="muted">No kill chain is open.</p>
              ) : (
                <ul class="plain chains">
                  {data.chains_in_progress.map((c) => (
                    <li key={c.id}>
                      <a href={href(`/alerts/${c.id}`)}>{c.type}</a> · <span class="mono">{c.subject}</span> · {fmtTime(c.last_seen)}
                      <ol class="stages" aria-label={`Stages of ${c.type} on ${c.subject}`}>
                        {c.stages.map((st, i) => (
                          <li key={i}>
                            {st.event_id ? (
                              <a href={href(`/events/${encodeURIComponent(st.event_id)}`)}>{st.stage.replace(/_/g, ' ')}</a>
                            ) : (
                              st.stage.replace(/_/g, ' ')
                            )}
                          </li>
                        ))}
                      </ol>
                    </li>
                  ))}
                </ul>
              )}
            </Card>
            <Card title="Riskiest actors">
              <TopTable
                rows={data.top_actors.map((a) => ({ value: a.actor_id, count: a.count, risk: a.max_risk, alerts: a.alerts }))}
                what="Actor"
                kind="actor"
              />
            </Card>
            <Card title="Riskiest addresses">
              <TopTable rows={data.top_ips.map((a) => ({ value: a.ip, count: a.count, risk: a.max_risk, alerts: a.alerts }))} what="Address" kind="ip" />
            </Card>
          </div>
        )}
      </Loading>
    </>
  );
}

/** Ranked by the service (highest risk, then alerts, then volume); the order is kept. */
function TopTable({ rows, what, kind }: { rows: { value: string; count: number; risk: number; alerts?: number }[]; what: string; kind: EntityKind }) {
  if (rows.length === 0) return <p class="muted">No events in this range.</p>;
  const withAlerts = rows.some((r) => r.alerts !== undefined);
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">{what}</th>
          {withAlerts && (
            <th scope="col" class="num">
              Alerts
            </th>
          )}
          <th scope="col" class="num">
            Events
          </th>
          <th scope="col" class="num">
            Max risk
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.value}>
            <td>
              <EntityLink kind={kind} value={r.value} />
            </td>
            {withAlerts && <td class="num">{fmtNumber(r.alerts ?? 0)}</td>}
            <td class="num">{fmtNumber(r.count)}</td>
            <td class="num">
              <Risk score={r.risk} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
