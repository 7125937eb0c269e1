import { useState } from 'preact/hooks';
import { ApiFailure, call, query, type Alert, type AlertStatus, type ChainStage, type EventDoc, type Page } from '../api';
import { go, href } from '../router';
import { Card, fmtTime, Loading, Risk, Severity, useLoad } from '../ui';

const STATUSES: readonly [AlertStatus, string][] = [
  ['open', 'Open'],
  ['acknowledged', 'Acknowledged'],
  ['resolved', 'Resolved'],
  ['false_positive', 'False positive'],
];
const statusLabel = (s: string) => STATUSES.find(([v]) => v === s)?.[1] ?? s;
/** Events shown behind one alert (an alert keeps the ids of its most recent events). */
const EVENTS_SHOWN = 25;

export function AlertsView({ params }: { params: URLSearchParams }) {
  const filters = { status: params.get('status') ?? undefined, severity: params.get('severity') ?? undefined, type: params.get('type') ?? undefined };
  const q = query({ ...filters, cursor: params.get('cursor') ?? undefined, limit: 50 });
  const { data, error } = useLoad(() => call<Page<Alert>>('GET', `/v1/alerts${q}`), [q]);
  const set = (name: string) => (e: Event) => go('/alerts', { ...filters, [name]: (e.currentTarget as HTMLSelectElement).value || undefined });
  return (
    <>
      <h1>Alerts</h1>
      <form class="filters" aria-label="Alert filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={filters.status ?? ''} onChange={set('status')}>
            <option value="">Any</option>
            {STATUSES.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select value={filters.severity ?? ''} onChange={set('severity')}>
            <option value="">Any</option>
            {['critical', 'high', 'medium', 'low'].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      <Loading error={error}>
        {data && (
          <>
            <div class="table-scroll">
              <table>
                <caption class="visually-hidden">Alerts, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Alert</th>
                    <th scope="col">Severity</th>
                    <th scope="col">Status</th>
                    <th scope="col">Subject</th>
                    <th scope="col" class="num">
                      Events
                    </th>
                    <th scope="col">Last seen</th>
                  </tr>
                </thead>
                <tbody>
                  {data.data.map((a) => (
                    <tr key={a.id}>
                      <td class="mono">
                        <a href={href(`/alerts/${a.id}`)}>{a.type}</a>
                      </td>
                      <td>
                        <Severity level={a.severity} />
                      </td>
                      <td>{statusLabel(a.status)}</td>
                      <td class="mono">{a.subject}</td>
                      <td class="num">{a.count}</td>
                      <td>{fmtTime(a.last_seen)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {data.data.length === 0 && <p class="muted">No alert matches these filters.</p>}
            <nav class="pager" aria-label="Pages">
              {params.get('cursor') && <a href={href('/alerts', filters)}>First page</a>}
              {data.next_cursor && <a href={href('/alerts', { ...filters, cursor: data.next_cursor })}>Next page</a>}
            </nav>
          </>
        )}
      </Loading>
    </>
  );
}

interface Note {
  readonly id: string;
  readonly status: AlertStatus;
  readonly note: string;
  readonly created_at: string;
}

export function AlertPage({ id }: { id: string }) {
  const path = encodeURIComponent(id);
  const alert = useLoad(() => call<Alert>('GET', `/v1/alerts/${path}`), [id]);
  const notes = useLoad(() => call<{ data: Note[] }>('GET', `/dashboard/api/alerts/${path}/notes`), [id]);
  const a = alert.data;
  return (
    <Loading error={alert.error}>
      {a && (
        <>
          <p>
            <a href="#/alerts">← Alerts</a>
          </p>
          <h1>
            <span class="mono">{a.type}</span> <Severity level={a.severity} />
          </h1>
          <div class="grid">
            <Card title="Alert">
              <dl>
                <dt>Status</dt>
                <dd data-testid="alert-status">{statusLabel(a.status)}</dd>
                <dt>Subject</dt>
                <dd class="mono">{a.subject}</dd>
                <dt>Events</dt>
                <dd>{a.count}</dd>
                <dt>First seen</dt>
                <dd>{fmtTime(a.first_seen)}</dd>
                <dt>Last seen</dt>
                <dd>{fmtTime(a.last_seen)}</dd>
                {Object.entries(a.details)
                  .filter(([k]) => k !== 'stages')
                  .map(([k, v]) => (
                    <>
                      <dt key={`${k}-t`}>{k.replace(/_/g, ' ')}</dt>
                      <dd key={`${k}-d`} class="mono">
                        {typeof v === 'object' ? JSON.stringify(v) : String(v)}
                      </dd>
                    </>
                  ))}
              </dl>
            </Card>
            <StatusForm alert={a} onChanged={() => (alert.reload(), notes.reload())} />
            {Array.isArray(a.details.stages) && <ChainTimeline stages={a.details.stages as ChainStage[]} />}
            <Card title="Notes">
              <Loading error={notes.error}>
                {notes.data &&
                  (notes.data.data.length === 0 ? (
                    <p class="muted">No notes yet.</p>
                  ) : (
                    <ol class="plain notes">
                      {notes.data.data.map((n) => (
                        <li key={n.id}>
                          <strong>{statusLabel(n.status)}</strong> · {fmtTime(n.created_at)}
                          <p>{n.note}</p>
                        </li>
                      ))}
                    </ol>
                  ))}
              </Loading>
            </Card>
            <AlertEvents ids={a.event_ids} />
          </div>
        </>
      )}
    </Loading>
  );
}

function StatusForm({ alert, onChanged }: { alert: Alert; onChanged: () => void }) {
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const status = String(data.get('status')) as AlertStatus;
    const note = String(data.get('note') ?? '').trim();
    setError('');
    setDone('');
    try {
      await call('PATCH', `/v1/alerts/${encodeURIComponent(alert.id)}`, { status });
      if (note) await call('POST', `/dashboard/api/alerts/${encodeURIComponent(alert.id)}/notes`, { status, note });
      form.reset();
      setDone(`Status set to ${statusLabel(status)}.`);
      onChanged();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <Card title="Change status">
      <form onSubmit={submit} class="stack">
        <fieldset>
          <legend>New status</legend>
          {STATUSES.map(([v, l]) => (
            <label key={v} class="inline">
              <input type="radio" name="status" value={v} required defaultChecked={v !== alert.status && v === 'acknowledged'} /> {l}
            </label>
          ))}
        </fieldset>
        <label>
          Note (optional)
          <textarea name="note" rows={3} maxLength={2000} />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <p role="status" class="ok">
          {done}
        </p>
        <button type="submit">Save status</button>
      </form>
    </Card>
  );
}

function ChainTimeline({ stages }: { stages: ChainStage[] }) {
  return (
    <Card title="Kill chain stages" wide>
      <ol class="timeline">
        {stages.map((s, i) => (
          <li key={i}>
            <span class="step">{i + 1}</span>
            <div>
              <strong>{s.stage.replace(/_/g, ' ')}</strong>
              <div class="small">{fmtTime(s.at)}</div>
              {s.event_type && <div class="mono small">{s.event_type}</div>}
              {s.alerts.length > 0 && <div class="small">alerts: {s.alerts.join(', ')}</div>}
            </div>
          </li>
        ))}
      </ol>
    </Card>
  );
}

function AlertEvents({ ids }: { ids: readonly string[] }) {
  const shown = ids.slice(-EVENTS_SHOWN).reverse();
  const { data, error } = useLoad(
    () => Promise.all(shown.map((id) => call<EventDoc>('GET', `/v1/events/${encodeURIComponent(id)}`).catch(() => undefined))),
    [ids.join(',')],
  );
  return (
    <Card title="Events behind this alert" wide>
      <Loading error={error}>
        {data && (
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Type</th>
                  <th scope="col">Actor</th>
                  <th scope="col">IP</th>
                  <th scope="col" class="num">
                    Risk
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.map((ev, i) =>
                  ev ? (
                    <tr key={ev.id}>
                      <td>
                        <a href={href(`/events/${ev.id}`)}>{fmtTime(ev.timestamp)}</a>
                      </td>
                      <td class="mono">{ev.event}</td>
                      <td class="mono">{ev.actor_id ?? '—'}</td>
                      <td class="mono">{ev.ip ?? '—'}</td>
                      <td class="num">{ev.risk ? <Risk score={ev.risk.score} /> : '—'}</td>
                    </tr>
                  ) : (
                    <tr key={shown[i]}>
                      <td colSpan={5} class="muted mono">
                        {shown[i]} (no longer stored)
                      </td>
                    </tr>
                  ),
                )}
              </tbody>
            </table>
          </div>
        )}
        {ids.length > EVENTS_SHOWN && (
          <p class="muted small">
            The {EVENTS_SHOWN} most recent of {ids.length} events.
          </p>
        )}
      </Loading>
    </Card>
  );
}
