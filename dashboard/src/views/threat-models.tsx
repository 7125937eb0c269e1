import { useRef, useState } from 'preact/hooks';
import { ApiFailure, call, type DryRun, type ThreatModel, type ThreatModelVersion } from '../api';
import { Table, type Column } from '../list';
import { locateInJson, locateInYaml } from '../locate';
import { go, href } from '../router';
import { dryRunAll, type DryRunSummary } from '../dry-run';
import { useCan, useSessionInfo } from '../session';
import { Card, fmtNumber, fmtTime, Loading, Problems, problemsOf, Severity, useLoad, type Problem } from '../ui';

/**
 * Custom threat models: the list with enable/disable, an editor for native JSON and Sigma YAML
 * that shows the service's validation messages with their paths, a dry run over stored events,
 * and the saved versions. Loaded on demand: the first load of the dashboard does not carry it.
 */
export function ThreatModelsView({ id, params }: { id?: string; params: URLSearchParams }) {
  if (id === undefined) return <ModelList />;
  return <ModelPage key={id} id={id === 'new' ? undefined : id} saved={params.get('saved') === '1'} />;
}

type Format = 'native' | 'sigma';

const NATIVE_EXAMPLE = `{
  "name": "Bulk export",
  "description": "Three large exports by one actor within an hour",
  "match": {
    "event": "custom.export.*",
    "where": { "field": "metadata.rows", "op": "gt", "value": 10000 }
  },
  "threshold": { "count": 3, "group_by": "actor_id", "window_seconds": 3600 },
  "outcome": { "alert": "custom.bulk_export", "severity": "high", "points": 35, "tags": ["exfiltration"] }
}
`;

const SIGMA_EXAMPLE = `title: Admin sign-in from a Tor exit range
description: A sign-in to an admin account from an address of a known Tor exit range
detection:
  selection:
    event.action: auth.login.success
    User|startswith: admin
  tor:
    SourceIp|cidr: 185.220.101.0/24
  condition: selection and tor
level: high
tags:
  - attack.initial_access
`;

/** The service answered that the plan has no threat models: what the plan offers instead of an error. */
function PlanOffer() {
  return (
    <Card title="Custom detection rules">
      <p>
        Threat models are your own detection rules: conditions on any event field, thresholds and sequences over a time window, and the alert and points they
        add. They are written as JSON or imported as Sigma rules, tested against stored events before they are enabled, and evaluated in the same request as the
        event.
      </p>
      <p>
        <strong>Threat models come with the Pro and Business plans.</strong> Your account keeps every built-in detector on its current plan.
      </p>
    </Card>
  );
}

const planRefused = (error: unknown) => error instanceof ApiFailure && error.code === 'PLAN_UPGRADE_REQUIRED';
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Loads a threat-model resource; a plan without models is an answer, not an error. The session
 * says the plan: without models nothing is asked (the service would refuse it).
 */
function useModels<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const plan = useSessionInfo()?.account.pro;
  const offer = { data: undefined, offer: true } as const;
  return useLoad(
    () =>
      plan === false
        ? Promise.resolve(offer)
        : load().then(
            (data) => ({ data, offer: false }),
            (err: unknown) => {
              if (planRefused(err)) return offer;
              throw err;
            },
          ),
    deps,
  );
}

function ModelList() {
  const manage = useCan('manage');
  const list = useModels(() => call<{ data: ThreatModel[]; limits: { modelsPerAccount: number } }>('GET', '/v1/threat-models'), []);
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const toggle = async (m: ThreatModel) => {
    setError('');
    setStatus('');
    try {
      // A suspended model is enabled but does not run: enabling it again (a new version) lifts the suspension.
      const saved = await call<ThreatModel>('PATCH', `/v1/threat-models/${encodeURIComponent(m.id)}`, { enabled: m.suspended !== null || !m.enabled });
      setStatus(`${saved.name} ${saved.enabled ? 'enabled' : 'disabled'} (version ${saved.version}).`);
      list.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const columns: Column<ThreatModel>[] = [
    {
      label: 'Name',
      cell: (m) => (
        <>
          <a href={href(`/threat-models/${m.id}`)}>{m.name}</a>
          {m.suspended && <p class="small muted">{m.suspended.reason}</p>}
        </>
      ),
    },
    { label: 'Alert', cell: (m) => <span class="mono">{m.outcome.alert}</span> },
    { label: 'Severity', cell: (m) => <Severity level={m.outcome.severity} /> },
    { label: 'Format', cell: (m) => (m.format === 'sigma' ? 'Sigma' : 'JSON') },
    { label: 'Version', num: true, cell: (m) => m.version },
    { label: 'Updated', cell: (m) => fmtTime(m.updated_at) },
    {
      label: 'State',
      cell: (m) => {
        const action = m.suspended ? 'Re-enable' : m.enabled ? 'Disable' : 'Enable';
        return (
          <span class="state">
            {m.suspended ? <SuspendedBadge /> : <span>{m.enabled ? 'Enabled' : 'Disabled'}</span>}
            {manage && (
              <button type="button" class="secondary small" aria-label={`${action} ${m.name}`} onClick={() => void toggle(m)}>
                {action}
              </button>
            )}
          </span>
        );
      },
    },
  ];
  const data = list.data;
  return (
    <>
      <div class="heading">
        <h1>Threat models</h1>
        {data?.data && manage && (
          <a class="button" href={href('/threat-models/new')}>
            New model
          </a>
        )}
      </div>
      <Loading error={list.error}>
        {data &&
          (data.offer ? (
            <PlanOffer />
          ) : (
            <>
              <p class="muted">
                Your own detection rules, evaluated after the built-in detectors on every event. Write one, test it on stored events with a dry run, then enable
                it.
              </p>
              {error && (
                <p class="error" role="alert">
                  {error}
                </p>
              )}
              <p role="status" class="ok">
                {status}
              </p>
              {data.data && data.data.data.length > 0 ? (
                <Table caption="Threat models" columns={columns} rows={data.data.data} />
              ) : (
                <p class="muted">No threat model yet.</p>
              )}
              {data.data && (
                <p class="muted small">
                  {data.data.data.length} of {data.data.limits.modelsPerAccount} models.
                </p>
              )}
            </>
          ))}
      </Loading>
    </>
  );
}

const SuspendedBadge = () => <span class="badge sev-critical">Suspended</span>;

/** What the editor shows of a saved model: its definition without the fields the service manages. */
function editorText(m: { format: Format; sigma?: unknown } & Record<string, unknown>): string {
  if (m.format === 'sigma') return typeof m.sigma === 'string' ? m.sigma : JSON.stringify(m.sigma, null, 2);
  const { id: _id, version: _v, format: _f, sigma: _s, created_at: _c, updated_at: _u, enabled: _e, suspended: _p, ...definition } = m;
  return `${JSON.stringify(definition, null, 2)}\n`;
}

/** The request body for the editor's content; a problem when the JSON does not parse. */
function bodyOf(format: Format, text: string, enabled: boolean): { body: Record<string, unknown> } | { problem: Problem } {
  if (format === 'sigma') return { body: { format: 'sigma', rule: text, enabled } };
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { problem: { field: '(model)', message: 'a model is a JSON object' } };
    return { body: { ...parsed, enabled } };
  } catch (err) {
    return { problem: { field: '(model)', message: `not valid JSON: ${messageOf(err)}` } };
  }
}

/** Local time for a datetime-local input. */
const localInput = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

function ModelPage({ id, saved }: { id?: string; saved: boolean }) {
  // A new model's page asks for the list only to learn whether the plan has threat models.
  const model = useModels(
    () => (id === undefined ? call('GET', '/v1/threat-models').then(() => undefined) : call<ThreatModel>('GET', `/v1/threat-models/${encodeURIComponent(id)}`)),
    [id],
  );
  return (
    <>
      <p>
        <a href="#/threat-models">← Threat models</a>
      </p>
      <Loading error={model.error}>
        {model.data &&
          (model.data.offer ? (
            <>
              <h1>Threat models</h1>
              <PlanOffer />
            </>
          ) : (
            <Editor model={model.data.data} saved={saved} onSaved={model.reload} />
          ))}
      </Loading>
    </>
  );
}

function Editor({ model, saved, onSaved }: { model?: ThreatModel; saved: boolean; onSaved: () => void }) {
  const manage = useCan('manage');
  const [format, setFormat] = useState<Format>(model?.format ?? 'native');
  const [text, setText] = useState(model ? editorText(model as unknown as { format: Format } & Record<string, unknown>) : NATIVE_EXAMPLE);
  const [enabled, setEnabled] = useState(model?.enabled ?? false);
  const [problems, setProblems] = useState<readonly Problem[]>([]);
  const [status, setStatus] = useState(saved && model ? `Saved as version ${model.version}.` : '');
  const [busy, setBusy] = useState(false);

  const switchFormat = (next: Format) => {
    // An untouched example follows the format; the user's own text is kept.
    if (text === NATIVE_EXAMPLE || text === SIGMA_EXAMPLE) setText(next === 'sigma' ? SIGMA_EXAMPLE : NATIVE_EXAMPLE);
    setFormat(next);
    setProblems([]);
  };

  const refused = (err: unknown) => setProblems(problemsOf(err, '(model)'));
  const textarea = useRef<HTMLTextAreaElement>(null);
  /** Selects the part of the rule a problem's path names, when it is in the text. */
  const show = (field: string) => {
    const range = format === 'sigma' ? locateInYaml(text, field) : locateInJson(text, field);
    if (range === undefined) return undefined;
    return () => {
      const el = textarea.current;
      if (el === null) return;
      el.focus();
      el.setSelectionRange(range.start, range.end);
    };
  };

  const save = async (e: Event) => {
    e.preventDefault();
    setStatus('');
    const request = bodyOf(format, text, enabled);
    if ('problem' in request) return setProblems([request.problem]);
    setProblems([]);
    setBusy(true);
    try {
      if (model === undefined) {
        const created = await call<ThreatModel>('POST', '/v1/threat-models', request.body);
        go(`/threat-models/${created.id}`, { saved: '1' });
      } else {
        const updated = await call<ThreatModel>('PUT', `/v1/threat-models/${encodeURIComponent(model.id)}`, request.body);
        setStatus(`Saved as version ${updated.version}.`);
        onSaved();
      }
    } catch (err) {
      refused(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>{model ? model.name : 'New threat model'}</h1>
      {model?.suspended && (
        <p class="error" data-testid="suspension">
          <SuspendedBadge /> {model.suspended.reason}
        </p>
      )}
      <div class="grid">
        <Card title="Rule" wide>
          <form class="stack" onSubmit={save}>
            <fieldset>
              <legend>Format</legend>
              <label class="inline">
                <input type="radio" name="format" value="native" checked={format === 'native'} onChange={() => switchFormat('native')} /> Native rule (JSON)
              </label>
              <label class="inline">
                <input type="radio" name="format" value="sigma" checked={format === 'sigma'} onChange={() => switchFormat('sigma')} /> Sigma rule (YAML)
              </label>
            </fieldset>
            <label>
              {format === 'sigma' ? 'Rule (Sigma YAML)' : 'Rule (JSON)'}
              <textarea
                ref={textarea}
                class="mono editor"
                name="rule"
                rows={18}
                spellcheck={false}
                value={text}
                onInput={(e) => setText(e.currentTarget.value)}
                aria-invalid={problems.length > 0}
                aria-describedby={problems.length > 0 ? 'rule-problems' : 'rule-help'}
              />
            </label>
            <p id="rule-help" class="hint">
              {format === 'sigma'
                ? 'Detection selections, modifiers, conditions and correlations of the Sigma specification; fields map to Vigil’s (User → actor_id, SourceIp → ip, others → metadata.*).'
                : 'match (event glob and conditions on any field), optional threshold or sequence, and the outcome: alert type under custom., severity, points and tags.'}
            </p>
            <Problems id="rule-problems" problems={problems} show={show} />
            <label class="inline">
              <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled: evaluate it on every event
            </label>
            <p role="status" class="ok">
              {status}
            </p>
            {manage ? (
              <div class="actions">
                <button type="submit" disabled={busy}>
                  {model ? 'Save new version' : 'Create model'}
                </button>
              </div>
            ) : (
              <p class="muted">Your role can dry-run this rule; an admin or owner saves and enables models.</p>
            )}
          </form>
        </Card>
        <DryRunCard format={format} text={text} enabled={enabled} onProblems={setProblems} />
        {model && <Versions model={model} onLoad={(f, t) => (setFormat(f), setText(t), setProblems([]))} />}
      </div>
    </>
  );
}

/** The dry run of the editor's rule; a rule the service refuses shows its problems in the editor. */
function DryRunCard({
  format,
  text,
  enabled,
  onProblems,
}: {
  format: Format;
  text: string;
  enabled: boolean;
  onProblems: (problems: readonly Problem[]) => void;
}) {
  const [result, setResult] = useState<DryRunSummary | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const stopping = useRef(false);
  const now = Date.now();
  const run = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const request = bodyOf(format, text, enabled);
    setError('');
    if ('problem' in request) return onProblems([request.problem]);
    onProblems([]);
    setBusy(true);
    stopping.current = false;
    setResult(undefined);
    try {
      const from = new Date(String(form.get('from'))).toISOString();
      const to = new Date(String(form.get('to'))).toISOString();
      // A day or more of events is read page by page; the bar shows how far the run is.
      setResult(
        await dryRunAll(
          { model: request.body },
          { from, to },
          (_page, summary) => setResult(summary),
          () => stopping.current,
        ),
      );
    } catch (err) {
      setResult(undefined);
      if (err instanceof ApiFailure && err.code === 'INVALID_THREAT_MODEL') onProblems(problemsOf(err, '(model)'));
      else setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const eventColumns: Column<DryRun['events'][number]>[] = [
    { label: 'Time', cell: (ev) => <a href={href(`/events/${ev.id}`)}>{fmtTime(ev.timestamp)}</a> },
    { label: 'Type', cell: (ev) => <span class="mono">{ev.event}</span> },
    { label: 'Actor', cell: (ev) => <span class="mono">{ev.actor_id ?? '—'}</span> },
    { label: 'IP', cell: (ev) => <span class="mono">{ev.ip ?? '—'}</span> },
  ];
  const alertColumns: Column<DryRun['alerts'][number] & { id: string }>[] = [
    { label: 'Alert', cell: (a) => <span class="mono">{a.type}</span> },
    { label: 'Severity', cell: (a) => <Severity level={a.severity} /> },
    { label: 'Subject', cell: (a) => <span class="mono">{a.subject}</span> },
    { label: 'Events', num: true, cell: (a) => a.count },
    { label: 'First seen', cell: (a) => fmtTime(a.first_seen) },
    { label: 'Last seen', cell: (a) => fmtTime(a.last_seen) },
  ];
  return (
    <Card title="Dry run" wide>
      <p class="hint">Runs the rule in the editor over the events stored in a time range (at most 31 days), without writing alerts, scores or state.</p>
      <form class="filters" onSubmit={run} aria-label="Dry run range">
        <label>
          From
          <input name="from" type="datetime-local" required defaultValue={localInput(now - 24 * 3600_000)} />
        </label>
        <label>
          Until
          <input name="to" type="datetime-local" required defaultValue={localInput(now + 60_000)} />
        </label>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Run dry run
          </button>
          {busy && (
            <button type="button" class="secondary" onClick={() => (stopping.current = true)}>
              Stop
            </button>
          )}
        </div>
      </form>
      {result && (busy || result.stopped) && (
        <>
          <label for="dry-run-progress">Events evaluated</label>
          <progress id="dry-run-progress" max={Math.max(1, result.total)} value={result.evaluated}>
            {fmtNumber(result.evaluated)} of {fmtNumber(result.total)}
          </progress>
        </>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div role="status">
        {result && (
          <p data-testid="dry-run-summary">
            {busy ? 'So far: scanned' : 'Scanned'} {fmtNumber(result.evaluated)}
            {busy && ` of ${fmtNumber(result.total)}`} events: {fmtNumber(result.matched)} matched, {fmtNumber(result.alerts_raised)}{' '}
            {result.alerts_raised === 1 ? 'alert' : 'alerts'} would be raised.
            {result.stopped && ' Stopped before the end of the range.'}
          </p>
        )}
      </div>
      {result && !busy && result.alerts.length > 0 && (
        <>
          <h3>Alerts it would raise</h3>
          <Table
            caption="Alerts the rule would have raised"
            columns={alertColumns}
            rows={result.alerts.map((a) => ({ ...a, id: `${a.type}|${a.subject}|${a.first_seen}` }))}
          />
        </>
      )}
      {result && !busy && result.events.length > 0 && (
        <>
          <h3>Matched events</h3>
          <Table caption="Stored events the rule matches" columns={eventColumns} rows={result.events} />
          {result.matched > result.events.length && (
            <p class="muted small">
              The first {result.events.length} of {fmtNumber(result.matched)} matched events.
            </p>
          )}
        </>
      )}
    </Card>
  );
}

function Versions({ model, onLoad }: { model: ThreatModel; onLoad: (format: Format, text: string) => void }) {
  const versions = useLoad(
    () => call<{ data: ThreatModelVersion[] }>('GET', `/v1/threat-models/${encodeURIComponent(model.id)}/versions`),
    [model.id, model.version],
  );
  return (
    <Card title="Versions" wide>
      <Loading error={versions.error}>
        {versions.data && (
          <ol class="plain versions">
            {versions.data.data.map((v) => {
              const text = editorText({ ...v.definition, format: v.format, sigma: v.sigma });
              return (
                <li key={v.version}>
                  <details>
                    <summary>
                      Version {v.version}
                      {v.version === model.version && ' (current)'} · {fmtTime(v.created_at)} · {v.format === 'sigma' ? 'Sigma' : 'JSON'} ·{' '}
                      {v.definition.enabled === false ? 'disabled' : 'enabled'}
                    </summary>
                    <pre>{text}</pre>
                    <button type="button" class="secondary" onClick={() => onLoad(v.format, text)}>
                      Load version {v.version} into the editor
                    </button>
                  </details>
                </li>
              );
            })}
          </ol>
        )}
      </Loading>
    </Card>
  );
}
