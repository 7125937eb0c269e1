import { useState } from 'preact/hooks';
import { call, type AllowlistEntry, type Settings } from '../api';
import { useCan, useSessionInfo } from '../session';
import { Card, Loading, Problems, problemsOf, useLoad, type Problem } from '../ui';

const KINDS = [
  ['ips', 'IP addresses and ranges'],
  ['asns', 'Autonomous systems (number)'],
  ['actors', 'Actors'],
  ['countries', 'Countries (ISO code)'],
] as const;

export function SettingsView() {
  const { data, error, reload } = useLoad(() => call<Settings>('GET', '/v1/settings'), []);
  const role = useSessionInfo()?.member?.role;
  const changes = useCan('triage');
  return (
    <>
      <h1>Settings</h1>
      {!changes && <p class="muted">Your role ({role}) reads these settings; an analyst or above changes them.</p>}
      <Loading error={error}>
        {data && (
          <fieldset class="plain" disabled={!changes}>
            <div class="grid">
              <RiskForm settings={data} onSaved={reload} />
              <AllowlistsForm settings={data} onSaved={reload} />
            </div>
          </fieldset>
        )}
      </Loading>
    </>
  );
}

function RiskForm({ settings, onSaved }: { settings: Settings; onSaved: () => void }) {
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saved, setSaved] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setProblems([]);
    setSaved('');
    try {
      await call('PATCH', '/v1/settings', { risk: { challenge: Number(form.get('challenge')), block: Number(form.get('block')) } });
      setSaved('Risk thresholds saved.');
      onSaved();
    } catch (err) {
      setProblems(problemsOf(err, 'settings'));
    }
  };
  const reset = async () => {
    await call('PATCH', '/v1/settings', { risk: null });
    setSaved('Risk thresholds reset to the defaults.');
    onSaved();
  };
  const { effective, defaults } = settings;
  return (
    <Card title="Risk thresholds">
      <form onSubmit={submit} class="stack">
        <p class="small muted">
          An event scoring at least the challenge threshold is answered “challenge”, at least the block threshold “block”. Defaults: challenge{' '}
          {defaults.risk.challenge}, block {defaults.risk.block}.
        </p>
        <label>
          Challenge from score
          <input name="challenge" type="number" min={0} max={100} required value={effective.risk.challenge} key={`c${effective.risk.challenge}`} />
        </label>
        <label>
          Block from score
          <input name="block" type="number" min={0} max={100} required value={effective.risk.block} key={`b${effective.risk.block}`} />
        </label>
        <Problems problems={problems} />
        <p role="status" class="ok">
          {saved}
        </p>
        <div class="actions">
          <button type="submit">Save thresholds</button>
          <button type="button" class="secondary" onClick={reset}>
            Reset to defaults
          </button>
        </div>
      </form>
    </Card>
  );
}

interface Row {
  kind: string;
  value: string;
  detectors: string;
  note: string;
}

const rowsOf = (allowlists: Settings['allowlists']): Row[] =>
  KINDS.flatMap(([kind]) => (allowlists[kind] ?? []).map((e) => ({ kind, value: String(e.value), detectors: e.detectors.join(', '), note: e.note ?? '' })));

function AllowlistsForm({ settings, onSaved }: { settings: Settings; onSaved: () => void }) {
  const [rows, setRows] = useState<Row[]>(() => rowsOf(settings.allowlists));
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saved, setSaved] = useState('');
  const detectorNames = Object.keys(settings.defaults.detectors);
  const update = (i: number, patch: Partial<Row>) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const submit = async (e: Event) => {
    e.preventDefault();
    const lists: Record<string, AllowlistEntry[]> = {};
    for (const r of rows) {
      const entry: AllowlistEntry = {
        value: r.kind === 'asns' && /^\d+$/.test(r.value.trim()) ? Number(r.value.trim()) : r.value.trim(),
        detectors: r.detectors
          .split(',')
          .map((d) => d.trim())
          .filter(Boolean),
      };
      if (r.note.trim()) entry.note = r.note.trim();
      (lists[r.kind] ??= []).push(entry);
    }
    setProblems([]);
    setSaved('');
    try {
      await call('PATCH', '/v1/settings', { allowlists: lists });
      setSaved('Allowlists saved.');
      onSaved();
    } catch (err) {
      setProblems(problemsOf(err, 'settings'));
    }
  };
  return (
    <Card title="Allowlists" wide>
      <form onSubmit={submit} class="stack">
        <p class="small muted">Entries the named detectors ignore (“*” for all). Detectors: {detectorNames.join(', ')}.</p>
        {rows.length === 0 && <p class="muted">No allowlist entries.</p>}
        {rows.map((r, i) => (
          <fieldset key={i} class="row">
            <legend class="visually-hidden">Entry {i + 1}</legend>
            <label>
              List
              <select value={r.kind} onChange={(e) => update(i, { kind: (e.currentTarget as HTMLSelectElement).value })}>
                {KINDS.map(([k, l]) => (
                  <option key={k} value={k}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Value
              <input value={r.value} required onInput={(e) => update(i, { value: (e.currentTarget as HTMLInputElement).value })} />
            </label>
            <label>
              Detectors
              <input value={r.detectors} required onInput={(e) => update(i, { detectors: (e.currentTarget as HTMLInputElement).value })} />
            </label>
            <label>
              Note
              <input value={r.note} onInput={(e) => update(i, { note: (e.currentTarget as HTMLInputElement).value })} />
            </label>
            <button type="button" class="secondary" onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}>
              Remove<span class="visually-hidden"> entry {i + 1}</span>
            </button>
          </fieldset>
        ))}
        <Problems problems={problems} />
        <p role="status" class="ok">
          {saved}
        </p>
        <div class="actions">
          <button type="button" class="secondary" onClick={() => setRows((rs) => [...rs, { kind: 'ips', value: '', detectors: '*', note: '' }])}>
            Add entry
          </button>
          <button type="submit">Save allowlists</button>
        </div>
      </form>
    </Card>
  );
}
