import { useState } from 'preact/hooks';
import { ApiFailure, call, type Page, type Webhook, type WebhookDelivery } from '../api';
import { Table } from '../list';
import { go, href } from '../router';
import { useCan } from '../session';
import { Card, fmtTime, FormError, Loading, NewSecret, useLoad } from '../ui';

const FORMATS: readonly (readonly [string, string])[] = [
  ['vigil', 'Vigil JSON'],
  ['ocsf', 'OCSF detection finding'],
  ['slack', 'Slack message'],
];
const SEVERITIES = ['low', 'medium', 'high', 'critical'];

const failure = (err: unknown) => (err instanceof ApiFailure ? err.message : String(err));
const typesOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);

/** The filters a form sets: least severity, alert type globs, kill chains only. */
function filtersOf(data: FormData) {
  return {
    min_severity: String(data.get('min_severity')),
    alert_types: typesOf(String(data.get('alert_types') ?? '')),
    kill_chains_only: data.get('kill_chains_only') === 'on',
  };
}

/** The endpoint's format and filters; a select's option is chosen with `selected` (a select has no default value of its own). */
function FilterFields({ webhook }: { webhook?: Webhook }) {
  return (
    <>
      <label>
        Format
        <select name="format">
          {FORMATS.map(([v, l]) => (
            <option key={v} value={v} selected={v === (webhook?.format ?? 'vigil')}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <label>
        Least severity
        <select name="min_severity">
          {SEVERITIES.map((s) => (
            <option key={s} value={s} selected={s === (webhook?.filters.min_severity ?? 'low')}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Alert types (globs, comma separated; empty: every type)
        <input name="alert_types" defaultValue={webhook?.filters.alert_types.join(', ') ?? ''} placeholder="auth.*, chain.*" autocomplete="off" />
      </label>
      <label class="inline">
        <input type="checkbox" name="kill_chains_only" defaultChecked={webhook?.filters.kill_chains_only ?? false} /> Kill chains only
      </label>
    </>
  );
}

function state(w: Webhook): string {
  if (w.enabled) return w.failing_since ? `enabled, failing since ${fmtTime(w.failing_since)}` : 'enabled';
  return w.disabled_reason ? `disabled: ${w.disabled_reason}` : 'disabled';
}

export function WebhooksView({ id }: { id?: string }) {
  return id ? <WebhookPage id={id} /> : <WebhookList />;
}

function WebhookList() {
  const { data, error, reload } = useLoad(() => call<{ data: Webhook[] }>('GET', '/v1/webhooks'), []);
  const manage = useCan('manage');
  const [created, setCreated] = useState<(Webhook & { secret: string }) | undefined>();
  return (
    <>
      <h1>Webhooks</h1>
      <div class="grid">
        {manage && (
          <CreateWebhook
            onCreated={(w) => {
              setCreated(w);
              reload();
            }}
          />
        )}
        {created && <NewSecret title="Signing secret" name={created.url} secret={created.secret} onDone={() => go(`/webhooks/${created.id}`)} />}
        <Card title="Endpoints" wide>
          <Loading error={error}>
            {data &&
              (data.data.length === 0 ? (
                <p class="muted">No endpoint yet: alerts reach nobody outside the dashboard.</p>
              ) : (
                <Table
                  caption="Webhook endpoints"
                  rows={data.data}
                  columns={[
                    {
                      label: 'URL',
                      cell: (w) => (
                        <a class="mono" href={href(`/webhooks/${w.id}`)}>
                          {w.url}
                        </a>
                      ),
                    },
                    { label: 'Format', cell: (w) => w.format },
                    { label: 'Least severity', cell: (w) => w.filters.min_severity },
                    { label: 'State', cell: state },
                  ]}
                />
              ))}
          </Loading>
        </Card>
      </div>
    </>
  );
}

function CreateWebhook({ onCreated }: { onCreated: (w: Webhook & { secret: string }) => void }) {
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setError('');
    try {
      const body = {
        url: String(data.get('url')).trim(),
        description: String(data.get('description') ?? '').trim(),
        format: String(data.get('format')),
        filters: filtersOf(data),
      };
      onCreated(await call<Webhook & { secret: string }>('POST', '/v1/webhooks', body));
      form.reset();
    } catch (err) {
      setError(failure(err));
    }
  };
  return (
    <Card title="Add an endpoint" wide>
      <form class="filters" onSubmit={submit}>
        <label>
          URL
          <input name="url" type="url" required maxLength={2048} placeholder="https://hooks.example.com/vigil" autocomplete="off" />
        </label>
        <label>
          Description
          <input name="description" maxLength={200} autocomplete="off" />
        </label>
        <FilterFields />
        <FormError error={error} />
        <button type="submit">Add endpoint</button>
      </form>
    </Card>
  );
}

function WebhookPage({ id }: { id: string }) {
  const path = `/v1/webhooks/${encodeURIComponent(id)}`;
  const endpoint = useLoad(() => call<Webhook>('GET', path), [id]);
  const deliveries = useLoad(() => call<Page<WebhookDelivery>>('GET', `${path}/deliveries?limit=50`), [id]);
  const manage = useCan('manage');
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const [secret, setSecret] = useState('');
  const [confirming, setConfirming] = useState(false);
  const w = endpoint.data;
  const act = async (what: () => Promise<string>) => {
    setError('');
    setDone('');
    try {
      setDone(await what());
      endpoint.reload();
      deliveries.reload();
    } catch (err) {
      setError(failure(err));
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    void act(async () => {
      await call('PATCH', path, { url: String(data.get('url')).trim(), format: String(data.get('format')), filters: filtersOf(data) });
      return 'Saved.';
    });
  };
  return (
    <Loading error={endpoint.error}>
      {w && (
        <>
          <p>
            <a href="#/webhooks">← Webhooks</a>
          </p>
          <h1>
            Webhook <span class="mono">{w.url}</span>
          </h1>
          <div class="grid">
            <Card title="Endpoint">
              <dl>
                <dt>State</dt>
                <dd data-testid="webhook-state">{state(w)}</dd>
                <dt>Format</dt>
                <dd>{w.format}</dd>
                <dt>Least severity</dt>
                <dd>{w.filters.min_severity}</dd>
                <dt>Alert types</dt>
                <dd class="mono">{w.filters.alert_types.join(', ') || 'every type'}</dd>
                <dt>Kill chains only</dt>
                <dd>{w.filters.kill_chains_only ? 'yes' : 'no'}</dd>
                {w.description && (
                  <>
                    <dt>Description</dt>
                    <dd>{w.description}</dd>
                  </>
                )}
                {w.previous_secret_expires_at && (
                  <>
                    <dt>Old secret signs until</dt>
                    <dd>{fmtTime(w.previous_secret_expires_at)}</dd>
                  </>
                )}
                <dt>Created</dt>
                <dd>{fmtTime(w.created_at)}</dd>
              </dl>
            </Card>
            {manage && (
              <Card title="Actions">
                <div class="actions">
                  <button
                    type="button"
                    onClick={() => void act(async () => `Test delivery: ${answerOf(await call<WebhookDelivery>('POST', `${path}/test`))}.`)}
                  >
                    Send a test
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() =>
                      void act(async () => {
                        await call('PATCH', path, { enabled: !w.enabled });
                        return w.enabled ? 'Disabled.' : 'Enabled.';
                      })
                    }
                  >
                    {w.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() =>
                      void act(async () => {
                        setSecret((await call<{ secret: string }>('POST', `${path}/rotate-secret`, {})).secret);
                        return 'New signing secret made; the old one signs for 24 hours more.';
                      })
                    }
                  >
                    Rotate the secret
                  </button>
                  {confirming ? (
                    <>
                      <button
                        type="button"
                        class="danger"
                        onClick={() =>
                          void act(async () => {
                            await call('DELETE', path);
                            go('/webhooks');
                            return 'Deleted.';
                          })
                        }
                      >
                        Yes, delete it and its deliveries
                      </button>
                      <button type="button" class="secondary" onClick={() => setConfirming(false)}>
                        Keep it
                      </button>
                    </>
                  ) : (
                    <button type="button" class="secondary" onClick={() => setConfirming(true)}>
                      Delete
                    </button>
                  )}
                </div>
                <FormError error={error} />
                <p role="status" class="ok">
                  {done}
                </p>
              </Card>
            )}
            {secret && <NewSecret title="New signing secret" name={w.url} secret={secret} onDone={() => setSecret('')} />}
            {manage && (
              <Card title="Change the endpoint" wide>
                <form class="filters" onSubmit={save} key={w.updated_at}>
                  <label>
                    URL
                    <input name="url" type="url" required maxLength={2048} defaultValue={w.url} autocomplete="off" />
                  </label>
                  <FilterFields webhook={w} />
                  <button type="submit">Save</button>
                </form>
              </Card>
            )}
            <Card title="Deliveries" wide>
              <div class="actions">
                <button type="button" class="secondary small" onClick={deliveries.reload}>
                  Refresh
                </button>
              </div>
              <Loading error={deliveries.error}>
                {deliveries.data &&
                  (deliveries.data.data.length === 0 ? (
                    <p class="muted">Nothing delivered yet.</p>
                  ) : (
                    <Table
                      caption="Deliveries, newest first"
                      rows={deliveries.data.data}
                      columns={[
                        { label: 'Made', cell: (d) => fmtTime(d.created_at) },
                        { label: 'Why', cell: (d) => <span class="mono">{d.event}</span> },
                        { label: 'Alert', cell: (d) => (d.alert_id ? <a href={href(`/alerts/${d.alert_id}`)}>{d.alert_id}</a> : '—') },
                        { label: 'Status', cell: (d) => d.status },
                        { label: 'Attempts', num: true, cell: (d) => d.attempts },
                        { label: 'Answer', cell: (d) => answerOf(d) },
                        { label: 'Next attempt', cell: (d) => (d.next_attempt_at ? fmtTime(d.next_attempt_at) : '—') },
                      ]}
                    />
                  ))}
              </Loading>
            </Card>
          </div>
        </>
      )}
    </Loading>
  );
}

/** What the endpoint answered last: its HTTP status, or why no answer came. */
function answerOf(d: WebhookDelivery): string {
  if (!d.last_answer) return d.status === 'pending' ? 'waiting for the first attempt' : d.status;
  const parts = [d.status, d.last_answer.status === null ? '' : `HTTP ${d.last_answer.status}`, d.last_answer.error ?? ''].filter(Boolean);
  return parts.join(', ');
}
