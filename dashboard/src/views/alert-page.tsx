import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, type Alert, type AlertStatus, type ChainStage, type EventDoc } from '../api';
import { STATUSES, statusLabel } from '../alert-status';
import { EntityLink, quoted } from '../links';
import { EVENT_COLUMNS, Table } from '../list';
import { href } from '../router';
import { useCan, useSessionInfo } from '../session';
import { Card, fmtTime, FormError, Loading, Severity, useLoad } from '../ui';

/** Events shown behind one alert (an alert keeps the ids of its most recent events). */
const EVENTS_SHOWN = 25;
/** Event ids in the search link to the events list: the search takes at most 32 terms and 1,000 characters. */
const EVENTS_LINKED = 20;

/** The events list searching for the alert's most recent events by id. */
const eventsSearch = (ids: readonly string[]): string =>
  href('/events', {
    q: ids
      .slice(-EVENTS_LINKED)
      .map((id) => `id:${quoted(id)}`)
      .join(' OR '),
  });

interface Note {
  readonly id: string;
  readonly status: AlertStatus;
  readonly note: string;
  readonly created_at: string;
  readonly author?: { readonly kind: string; readonly id: string | null; readonly label: string } | null;
}

export function AlertPage({ id }: { id: string }) {
  const path = encodeURIComponent(id);
  const alert = useLoad(() => call<Alert>('GET', `/v1/alerts/${path}`), [id]);
  const notes = useLoad(() => call<{ data: Note[] }>('GET', `/dashboard/api/alerts/${path}/notes`), [id]);
  const triage = useCan('triage');
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
                {a.actor_id && (
                  <>
                    <dt>Actor</dt>
                    <dd>
                      <EntityLink kind="actor" value={a.actor_id} />
                    </dd>
                  </>
                )}
                <dt>Assignee</dt>
                <dd data-testid="alert-assignee">{a.assignee ? `${a.assignee.name} <${a.assignee.email}>` : 'Nobody'}</dd>
                <dt>Events</dt>
                <dd>
                  {a.count}
                  {a.event_ids.length > 0 && (
                    <>
                      {' · '}
                      <a href={eventsSearch(a.event_ids)} data-testid="alert-events-link">
                        Show the events behind this alert
                      </a>
                    </>
                  )}
                </dd>
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
            {triage && <StatusForm alert={a} onChanged={() => (alert.reload(), notes.reload())} />}
            {triage && <AssignForm alert={a} onChanged={alert.reload} />}
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
                          {n.author && <> · {n.author.label}</>}
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
  // The form shows the alert's status as it is now, so saving without a choice changes nothing.
  const [status, setStatus] = useState<AlertStatus>(alert.status);
  useEffect(() => setStatus(alert.status), [alert.status]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const noteField = form.elements.namedItem('note') as HTMLTextAreaElement;
    const note = noteField.value.trim();
    setError('');
    setDone('');
    try {
      await call('PATCH', `/v1/alerts/${encodeURIComponent(alert.id)}`, { status });
      if (note) await call('POST', `/dashboard/api/alerts/${encodeURIComponent(alert.id)}/notes`, { status, note });
      noteField.value = '';
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
          <legend>Status</legend>
          {STATUSES.map(([v, l]) => (
            <label key={v} class="inline">
              <input type="radio" name="status" value={v} required checked={v === status} onChange={() => setStatus(v)} /> {l}
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

/** Who works on the alert: a member of the account, or nobody. */
function AssignForm({ alert, onChanged }: { alert: Alert; onChanged: () => void }) {
  const me = useSessionInfo()?.member;
  const [error, setError] = useState('');
  const assign = async (assignee: string | null) => {
    setError('');
    try {
      await call('PATCH', `/v1/alerts/${encodeURIComponent(alert.id)}`, { assignee });
      onChanged();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <Card title="Assignee">
      <p>{alert.assignee ? `Assigned to ${alert.assignee.email}.` : 'Nobody works on this alert yet.'}</p>
      <FormError error={error} />
      <div class="actions">
        {me && alert.assignee?.id !== me.id && (
          <button type="button" onClick={() => void assign(me.id)}>
            Assign to me
          </button>
        )}
        {alert.assignee && (
          <button type="button" class="secondary" onClick={() => void assign(null)}>
            Unassign
          </button>
        )}
      </div>
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
              <div class="small">{s.event_id ? <a href={href(`/events/${encodeURIComponent(s.event_id)}`)}>{fmtTime(s.at)}</a> : fmtTime(s.at)}</div>
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
  const gone = data && shown.filter((_, i) => data[i] === undefined);
  return (
    <Card title="Events behind this alert" wide>
      <Loading error={error}>
        {data && <Table caption="Events behind this alert, newest first" columns={EVENT_COLUMNS} rows={data.filter((ev) => ev !== undefined)} />}
        {gone && gone.length > 0 && <p class="muted small">No longer stored: {gone.join(', ')}</p>}
        {ids.length > EVENTS_SHOWN && (
          <p class="muted small">
            The {EVENTS_SHOWN} most recent of {ids.length} events.
          </p>
        )}
      </Loading>
    </Card>
  );
}
