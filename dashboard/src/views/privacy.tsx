import { useEffect, useRef, useState } from 'preact/hooks';
import { call, send } from '../api';
import { Table } from '../list';
import { go, href } from '../router';
import { useCan, useSessionInfo } from '../session';
import { Card, fmtNumber, fmtTime, Loading, Problems, problemsOf, useLoad, type Problem } from '../ui';

const KINDS = [
  ['actor_id', 'Actor id'],
  ['email', 'Email'],
  ['ip', 'IP address'],
  ['device_id', 'Device id'],
] as const;
type Kind = (typeof KINDS)[number][0];
const kindLabel = (kind: string): string => KINDS.find(([k]) => k === kind)?.[1] ?? kind;

/** What the service takes per request: at most this many identifiers of at most this many characters. */
const MAX_IDENTIFIERS = 20;
const MAX_IDENTIFIER_LENGTH = 320;
/** Rows of an export the view keeps to show; the rest are only counted. */
const FIRST_ROWS = 20;
const POLL_MS = 1000;

interface Identifier {
  readonly kind: Kind;
  readonly value: string;
}

/** One stored record of the subject as the export streams it (`type` says which list it comes from). */
interface SubjectRecord {
  readonly type: string;
  readonly id: string;
  readonly event?: string;
  readonly timestamp?: string;
  readonly actor_id?: string | null;
  readonly ip?: string;
  readonly email?: string;
  readonly subject?: string;
  readonly last_seen?: string;
  readonly alert_id?: string;
  readonly note?: string;
  readonly created_at?: string;
}

interface Found {
  /** The identifiers searched, as sent: erasing acts on exactly these. */
  readonly identifiers: readonly Identifier[];
  readonly counts: Readonly<Record<string, number>>;
  readonly first: readonly SubjectRecord[];
}

interface SubjectJob {
  readonly id: string;
  readonly status: 'queued' | 'running' | 'done' | 'failed';
  readonly created_at: string;
  readonly finished_at: string | null;
  readonly identifiers: readonly { kind: string; value_hint: string }[];
  readonly suppress_days: number;
  readonly progress: { readonly step: string | null; readonly done_steps: number; readonly total_steps: number };
  readonly counts: Readonly<Record<'events' | 'alerts' | 'notes' | 'audit' | 'state_keys' | 'deliveries', number>>;
  readonly error?: string;
}

interface PrivacySettings {
  readonly ip: 'keep' | 'truncate' | 'pseudonym';
  readonly actor_id: 'keep' | 'pseudonym';
  readonly email: 'keep' | 'pseudonym';
  readonly device_id: 'keep' | 'pseudonym';
  readonly user_agent: 'keep' | 'drop';
  readonly scrub: { readonly builtin: boolean; readonly keys: readonly string[]; readonly patterns: readonly string[] };
}

type RetentionClass = 'events' | 'alerts' | 'audit';

/** The parts of GET /v1/settings this view reads. */
interface PrivacyAnswer {
  readonly retention: Partial<Record<`${RetentionClass}_days`, number>>;
  readonly effective: { readonly retention: Record<RetentionClass, number>; readonly privacy: PrivacySettings; readonly pseudonyms_available: boolean };
  readonly defaults: { readonly retention_max_days: number };
}

/**
 * Personal data: a data subject's stored records, exported and erased (admins and owners), and
 * the account's minimisation and retention settings (everyone reads them, admins and owners
 * change them). The service refuses every call a role may not make; the view says why first.
 */
export function PrivacyView({ params }: { params: URLSearchParams }) {
  const role = useSessionInfo()?.member?.role;
  const subjects = useCan('subjects');
  const manage = useCan('manage');
  const job = params.get('job') ?? undefined;
  return (
    <>
      <h1>Privacy</h1>
      <div class="grid">
        {subjects ? (
          <>
            {job && <JobStatus id={job} />}
            <SubjectSearch />
            <RecentJobs current={job} />
          </>
        ) : (
          <Card title="Data subjects" wide>
            <p class="muted">
              {role === undefined
                ? 'A session opened with a key does not search, export or erase data subjects; an admin or owner signed in as themselves does.'
                : `Your role (${role}) does not search, export or erase data subjects; an admin or owner does.`}
            </p>
          </Card>
        )}
      </div>
      <h2>Minimisation and retention</h2>
      {!manage && <p class="muted">Your role ({role}) reads these settings; an admin or owner changes them.</p>}
      <PrivacySettingsForms manage={manage} />
    </>
  );
}

/** Reads an NDJSON export as it arrives: counts by type and the first rows; nothing more is kept. */
async function readExport(identifiers: readonly Identifier[], signal: AbortSignal): Promise<Omit<Found, 'identifiers'>> {
  const res = await send('POST', '/v1/subjects/export', { identifiers }, signal);
  const counts: Record<string, number> = {};
  const first: SubjectRecord[] = [];
  const take = (line: string) => {
    if (line.trim() === '') return;
    const record = JSON.parse(line) as SubjectRecord;
    counts[record.type] = (counts[record.type] ?? 0) + 1;
    if (first.length < FIRST_ROWS) first.push(record);
  };
  if (res.body) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const lines = (rest + value).split('\n');
      rest = lines.pop() ?? '';
      lines.forEach(take);
    }
    take(rest);
  }
  return { counts, first };
}

/**
 * Saves the export to a file. The body goes from the network into the browser's blob storage
 * (which keeps large blobs on disk), never into the page's memory, and the file is saved from
 * there; the request is a POST so the identifiers stay out of addresses, logs and history.
 */
async function downloadExport(identifiers: readonly Identifier[]): Promise<void> {
  const res = await send('POST', '/v1/subjects/export', { identifiers });
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'vigil-subject.ndjson';
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser reads the blob for the download after the click returns; its address goes a minute later.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const summary = (counts: Readonly<Record<string, number>>): string => {
  const n = (type: string, one: string, many: string) => {
    const count = counts[type] ?? 0;
    return `${fmtNumber(count)} ${count === 1 ? one : many}`;
  };
  return `${n('event', 'event', 'events')}, ${n('alert', 'alert', 'alerts')}, ${n('note', 'note', 'notes')}`;
};

let rowKeys = 0;
const newRow = (kind: Kind = 'actor_id') => ({ key: ++rowKeys, kind, value: '' });

function SubjectSearch() {
  const [rows, setRows] = useState(() => [newRow()]);
  const [found, setFound] = useState<Found | undefined>();
  const [problems, setProblems] = useState<Problem[]>([]);
  const [busy, setBusy] = useState('');
  const [confirming, setConfirming] = useState(false);
  const searching = useRef<AbortController | undefined>(undefined);
  const eraseButton = useRef<HTMLButtonElement>(null);
  useEffect(() => () => searching.current?.abort(), []);
  const edit = (next: typeof rows) => {
    // What was found belongs to the identifiers searched: changing them asks for a new search.
    setRows(next);
    setFound(undefined);
    setConfirming(false);
  };
  const search = async (e: Event) => {
    e.preventDefault();
    const identifiers = rows.map(({ kind, value }) => ({ kind, value: value.trim() })).filter((i) => i.value !== '');
    searching.current?.abort();
    const controller = new AbortController();
    searching.current = controller;
    setProblems([]);
    setFound(undefined);
    setConfirming(false);
    setBusy('Searching…');
    try {
      const result = await readExport(identifiers, controller.signal);
      if (!controller.signal.aborted) setFound({ identifiers, ...result });
    } catch (err) {
      if (!controller.signal.aborted) setProblems(problemsOf(err, 'identifiers'));
    } finally {
      if (searching.current === controller) setBusy('');
    }
  };
  const download = async (identifiers: readonly Identifier[]) => {
    setProblems([]);
    setBusy('Preparing the download…');
    try {
      await downloadExport(identifiers);
      setBusy('');
    } catch (err) {
      setBusy('');
      setProblems(problemsOf(err, 'export'));
    }
  };
  const cancel = () => {
    setConfirming(false);
    // Focus goes back to the control that opened the confirmation.
    requestAnimationFrame(() => eraseButton.current?.focus());
  };
  return (
    <>
      <Card title="Data subject" wide>
        <form class="stack" onSubmit={(e) => void search(e)}>
          <p class="small muted">
            Every identifier the person is known by in your events (several at once). The search reads what is stored that mentions any of them.
          </p>
          {rows.map((row, i) => (
            <fieldset key={row.key} class="row">
              <legend class="visually-hidden">Identifier {i + 1}</legend>
              <label>
                Kind<span class="visually-hidden"> of identifier {i + 1}</span>
                <select value={row.kind} onChange={(e) => edit(rows.map((r) => (r.key === row.key ? { ...r, kind: e.currentTarget.value as Kind } : r)))}>
                  {KINDS.map(([k, l]) => (
                    <option key={k} value={k}>
                      {l}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Value<span class="visually-hidden"> of identifier {i + 1}</span>
                <input
                  value={row.value}
                  required
                  maxLength={MAX_IDENTIFIER_LENGTH}
                  autocomplete="off"
                  spellcheck={false}
                  onInput={(e) => edit(rows.map((r) => (r.key === row.key ? { ...r, value: e.currentTarget.value } : r)))}
                />
              </label>
              {rows.length > 1 && (
                <button type="button" class="secondary" onClick={() => edit(rows.filter((r) => r.key !== row.key))}>
                  Remove<span class="visually-hidden"> identifier {i + 1}</span>
                </button>
              )}
            </fieldset>
          ))}
          <Problems problems={problems} />
          <div class="actions">
            <button type="button" class="secondary" disabled={rows.length >= MAX_IDENTIFIERS} onClick={() => edit([...rows, newRow('email')])}>
              Add identifier
            </button>
            <button type="submit" disabled={busy !== ''}>
              Search
            </button>
          </div>
          <p role="status" class="small" aria-busy={busy !== '' ? 'true' : undefined}>
            {busy || (found ? `Stored about this subject: ${summary(found.counts)}.` : '')}
          </p>
        </form>
        {found && (
          <>
            <FoundRows found={found} />
            <div class="actions">
              <button type="button" class="secondary" disabled={busy !== ''} onClick={() => void download(found.identifiers)}>
                Download NDJSON
              </button>
              {!confirming && (
                <button type="button" class="danger" ref={eraseButton} onClick={() => setConfirming(true)}>
                  Erase…
                </button>
              )}
            </div>
          </>
        )}
      </Card>
      {found && confirming && (
        <EraseConfirmation
          found={found}
          onCancel={cancel}
          onErased={(job) => {
            setFound(undefined);
            setConfirming(false);
            requested = job.id;
            go('/privacy', { job: job.id });
          }}
        />
      )}
    </>
  );
}

function FoundRows({ found }: { found: Found }) {
  const total = Object.values(found.counts).reduce((a, b) => a + b, 0);
  if (total === 0) return <p class="muted">Nothing stored mentions these identifiers.</p>;
  return (
    <>
      <ul class="plain figures" data-testid="subject-counts">
        {Object.entries(found.counts).map(([type, count]) => (
          <li key={type}>
            <strong>{fmtNumber(count)}</strong> {type === 'note' ? 'notes' : `${type}s`}
          </li>
        ))}
      </ul>
      <Table
        caption={`The first ${found.first.length} of ${total} stored records`}
        rows={found.first}
        columns={[
          { label: 'Kind', cell: (r) => r.type },
          { label: 'When', cell: (r) => <span class="nowrap">{fmtTime(r.timestamp ?? r.last_seen ?? r.created_at ?? '')}</span> },
          {
            label: 'What',
            cell: (r) =>
              r.type === 'event' ? (
                <a class="mono" href={href(`/events/${r.id}`)}>
                  {r.event}
                </a>
              ) : r.type === 'alert' ? (
                <a class="mono" href={href(`/alerts/${r.id}`)}>
                  {r.id}
                </a>
              ) : (
                <a href={href(`/alerts/${r.alert_id ?? ''}`)}>{r.note}</a>
              ),
          },
          { label: 'Actor or subject', cell: (r) => <span class="mono">{r.type === 'alert' ? r.subject : (r.actor_id ?? r.email ?? '')}</span> },
          { label: 'IP', cell: (r) => <span class="mono nowrap">{r.ip ?? ''}</span> },
        ]}
      />
      {total > found.first.length && <p class="small muted">The download holds all {fmtNumber(total)}.</p>}
    </>
  );
}

const CONFIRM_WORD = 'erase';
/** The longest suppression an erasure asks for. */
const MAX_SUPPRESS_DAYS = 3650;

/** Names exactly what erasing does, to exactly which identifiers, and asks for the word before it does it. */
function EraseConfirmation({ found, onCancel, onErased }: { found: Found; onCancel: () => void; onErased: (job: SubjectJob) => void }) {
  const [typed, setTyped] = useState('');
  const [days, setDays] = useState('0');
  const [problems, setProblems] = useState<Problem[]>([]);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => input.current?.focus(), []);
  useEffect(() => {
    if (problems.length > 0) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [problems]);
  const c = found.counts;
  const suppressProblems = problemsAt(problems, 'suppress_days');
  const erase = async (e: Event) => {
    e.preventDefault();
    setProblems([]);
    setBusy(true);
    try {
      const suppress = days.trim() === '' ? {} : { suppress_days: Number(days) };
      onErased((await call<{ job: SubjectJob }>('POST', '/v1/subjects/erase', { identifiers: found.identifiers, ...suppress })).job);
    } catch (err) {
      setProblems(problemsOf(err, 'erase'));
      setBusy(false);
    }
  };
  return (
    <Card title="Erase this data subject" wide>
      <form ref={form} class="stack" onSubmit={(e) => void erase(e)} data-testid="erase-confirmation">
        <p>Erasing cannot be undone. It removes every stored mention of exactly these identifiers, in this account only:</p>
        <ul>
          {found.identifiers.map((i, n) => (
            <li key={n}>
              {kindLabel(i.kind)}: <span class="mono">{i.value}</span>
            </li>
          ))}
        </ul>
        <ul>
          <li>the {fmtNumber(c.event ?? 0)} events found are deleted, with their search entries;</li>
          <li>
            the {fmtNumber(c.alert ?? 0)} alerts and {fmtNumber(c.note ?? 0)} notes found, and audit entries, stay with each mention replaced by “[erased]”;
          </li>
          <li>webhook deliveries that mention them are deleted (a pending one is never sent), and so is detection state that mentions them;</li>
          <li data-testid="suppression">
            {Number(days) > 0
              ? `their later events are answered “dropped” and not kept for ${days} days after the erasure.`
              : 'their later events are kept as usual.'}
          </li>
        </ul>
        <label>
          Drop their later events for (days, at most {MAX_SUPPRESS_DAYS}; 0: keep them)
          <input
            type="number"
            step={1}
            inputMode="numeric"
            value={days}
            onInput={(e) => setDays(e.currentTarget.value)}
            {...described('problems-suppress', suppressProblems, 'suppress-help')}
          />
        </label>
        <p class="small muted" id="suppress-help">
          The suppression list holds keyed hashes of the identifiers, never the values; it needs the service’s pseudonym secret.
        </p>
        <FieldProblems id="problems-suppress" messages={suppressProblems} />
        <label>
          Type “{CONFIRM_WORD}” to confirm
          <input ref={input} value={typed} autocomplete="off" spellcheck={false} onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <Problems problems={problems.filter((p) => p.field !== 'suppress_days')} />
        <div class="actions">
          <button type="submit" class="danger" disabled={busy || typed.trim().toLowerCase() !== CONFIRM_WORD}>
            Erase permanently
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Card>
  );
}

/** The job this page just requested: its status takes the focus (not when the page opens on a job). */
let requested = '';

const finished = (job: SubjectJob) => job.status === 'done' || job.status === 'failed';

/** An erasure job, asked again every second until it is done; its id is in the address, so a reload follows it on. */
function JobStatus({ id }: { id: string }) {
  const [job, setJob] = useState<SubjectJob | undefined>();
  const [error, setError] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (requested === id) heading.current?.focus();
    requested = '';
  }, [id]);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const answer = (await call<{ job: SubjectJob }>('GET', `/v1/subjects/jobs/${encodeURIComponent(id)}`)).job;
        if (!live) return;
        setJob(answer);
        if (!finished(answer)) timer = setTimeout(() => void poll(), POLL_MS);
      } catch (err) {
        if (live) setError(problemsOf(err, 'job')[0]?.message ?? '');
      }
    };
    setJob(undefined);
    setError('');
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id]);
  return (
    <section class="card wide" aria-labelledby="erasure-job">
      <h2 id="erasure-job" ref={heading} tabIndex={-1}>
        Erasure <span class="mono">{id}</span>
      </h2>
      <Loading error={error}>
        {job && (
          <>
            <p role="status">
              Status: <strong data-testid="job-status">{job.status}</strong>
              {!finished(job) && job.progress.step && ` · step ${job.progress.step} (${job.progress.done_steps + 1} of ${job.progress.total_steps})`}
            </p>
            {job.error && <p class="error">{job.error}</p>}
            <dl data-testid="job-counts">
              <dt>Identifiers</dt>
              <dd>{job.identifiers.map((i) => `${kindLabel(i.kind)} ${i.value_hint}`).join(', ')}</dd>
              <dt>Events deleted</dt>
              <dd>{fmtNumber(job.counts.events)}</dd>
              <dt>Alerts redacted</dt>
              <dd>{fmtNumber(job.counts.alerts)}</dd>
              <dt>Notes redacted</dt>
              <dd>{fmtNumber(job.counts.notes)}</dd>
              <dt>Audit entries redacted</dt>
              <dd>{fmtNumber(job.counts.audit)}</dd>
              <dt>Webhook deliveries deleted</dt>
              <dd>{fmtNumber(job.counts.deliveries)}</dd>
              <dt>Detection state records deleted</dt>
              <dd>{fmtNumber(job.counts.state_keys)}</dd>
              <dt>Later events dropped for</dt>
              <dd>{job.suppress_days > 0 ? `${fmtNumber(job.suppress_days)} days` : 'none'}</dd>
              <dt>Requested</dt>
              <dd>{fmtTime(job.created_at)}</dd>
              {job.finished_at && (
                <>
                  <dt>Finished</dt>
                  <dd>{fmtTime(job.finished_at)}</dd>
                </>
              )}
            </dl>
          </>
        )}
      </Loading>
      <p class="small">
        <a href={href('/privacy')}>Close</a>
      </p>
    </section>
  );
}

function RecentJobs({ current }: { current: string | undefined }) {
  const { data, error } = useLoad(() => call<{ data: SubjectJob[] }>('GET', '/v1/subjects/jobs'), [current]);
  return (
    <Card title="Erasures" wide>
      <Loading error={error}>
        {data &&
          (data.data.length === 0 ? (
            <p class="muted">No erasure yet.</p>
          ) : (
            <Table
              caption="Erasures, newest first"
              rows={data.data.slice(0, 10)}
              columns={[
                {
                  label: 'Requested',
                  cell: (j) => (
                    <a class="nowrap" href={href('/privacy', { job: j.id })}>
                      {fmtTime(j.created_at)}
                    </a>
                  ),
                },
                { label: 'Identifiers', cell: (j) => j.identifiers.map((i) => `${kindLabel(i.kind)} ${i.value_hint}`).join(', ') },
                { label: 'Status', cell: (j) => j.status },
                { label: 'Events deleted', num: true, cell: (j) => fmtNumber(j.counts.events) },
              ]}
            />
          ))}
      </Loading>
    </Card>
  );
}

function PrivacySettingsForms({ manage }: { manage: boolean }) {
  const { data, error, reload } = useLoad(() => call<PrivacyAnswer>('GET', '/v1/settings'), []);
  return (
    <Loading error={error}>
      {data && (
        <fieldset class="plain" disabled={!manage}>
          <div class="grid">
            <MinimisationForm settings={data} onSaved={reload} />
            <RetentionForm settings={data} onSaved={reload} />
          </div>
        </fieldset>
      )}
    </Loading>
  );
}

/** The service's problems at one control (`field`, or an item of it such as `privacy.scrub.patterns.1`, said as its line). */
function problemsAt(problems: readonly Problem[], field: string): string[] {
  return problems.flatMap((p) => {
    if (p.field === field) return [p.message];
    const item = p.field.startsWith(`${field}.`) ? Number(p.field.slice(field.length + 1)) : NaN;
    return Number.isInteger(item) ? [`Line ${item + 1}: ${p.message}`] : [];
  });
}

/** A control's problems, read out by the control that names them in aria-describedby. */
/** The end of a settings form: problems no field shows, what was saved, Save and a reset to the defaults. */
function FormEnd(props: { problems: readonly Problem[]; saved: string; saveLabel: string; resetLabel: string; onReset: () => void }) {
  return (
    <>
      <Problems problems={props.problems} />
      <p role="status" class="ok">
        {props.saved}
      </p>
      <div class="actions">
        <button type="submit" data-action="save">
          {props.saveLabel}
        </button>
        <button type="button" class="secondary" data-action="reset" onClick={props.onReset}>
          {props.resetLabel}
        </button>
      </div>
    </>
  );
}

function FieldProblems({ id, messages }: { id: string; messages: readonly string[] }) {
  if (messages.length === 0) return null;
  return (
    <ul class="error plain small" id={id}>
      {messages.map((m, i) => (
        <li key={i}>{m}</li>
      ))}
    </ul>
  );
}

/** Attributes that tie a control to its problems (or its hint). */
const described = (id: string, messages: readonly string[], hint?: string) =>
  messages.length > 0 ? { 'aria-invalid': true as const, 'aria-describedby': id } : hint ? { 'aria-describedby': hint } : {};

/**
 * Saves one part of the settings. Problems show at their controls (the rest above the buttons)
 * and the first refused control takes the focus; the form shows the saved values anew (`shown`
 * changes) with the focus back on the button that saved.
 */
function usePartForm(part: string, onSaved: () => void, controls: readonly string[], shown: string) {
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saved, setSaved] = useState('');
  const form = useRef<HTMLFormElement>(null);
  const refocus = useRef('');
  useEffect(() => {
    if (problems.length > 0) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [problems]);
  useEffect(() => {
    if (refocus.current) form.current?.querySelector<HTMLElement>(`[data-action="${refocus.current}"]`)?.focus();
    refocus.current = '';
  }, [shown]);
  const save = async (value: unknown, done: string) => {
    setProblems([]);
    setSaved('');
    try {
      await call('PATCH', '/v1/settings', { [part]: value });
      setSaved(done);
      refocus.current = value === null ? 'reset' : 'save';
      onSaved();
    } catch (err) {
      setProblems(problemsOf(err, part));
    }
  };
  const elsewhere = problems.filter((p) => !controls.some((c) => p.field === c || p.field.startsWith(`${c}.`)));
  return { form, problems, elsewhere, saved, save };
}

const lines = (text: FormDataEntryValue | null): string[] =>
  String(text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

const MODE_FIELDS = [
  ['ip', 'IP addresses', ['keep', 'truncate', 'pseudonym']],
  ['actor_id', 'Actor ids', ['keep', 'pseudonym']],
  ['email', 'Emails', ['keep', 'pseudonym']],
  ['device_id', 'Device ids', ['keep', 'pseudonym']],
  ['user_agent', 'User agents', ['keep', 'drop']],
] as const;
const MODE_TEXT: Readonly<Record<string, string>> = {
  keep: 'keep as sent',
  truncate: 'truncate to the network (/24, /48)',
  pseudonym: 'replace by a pseudonym',
  drop: 'drop after enrichment',
};
const KEYS_FIELD = 'privacy.scrub.keys';
const PATTERNS_FIELD = 'privacy.scrub.patterns';

function MinimisationForm({ settings, onSaved }: { settings: PrivacyAnswer; onSaved: () => void }) {
  const p = settings.effective.privacy;
  const pseudonyms = settings.effective.pseudonyms_available;
  const controls = [...MODE_FIELDS.map(([f]) => `privacy.${f}`), KEYS_FIELD, PATTERNS_FIELD, 'privacy.scrub.builtin'];
  const shown = JSON.stringify(p);
  const { form, problems, elsewhere, saved, save } = usePartForm('privacy', onSaved, controls, shown);
  const submit = (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    const value = Object.fromEntries(MODE_FIELDS.map(([f]) => [f, String(data.get(f))]));
    void save(
      { ...value, scrub: { builtin: data.get('builtin') === 'on', keys: lines(data.get('keys')), patterns: lines(data.get('patterns')) } },
      'Minimisation saved.',
    );
  };
  const keyProblems = problemsAt(problems, KEYS_FIELD);
  const patternProblems = problemsAt(problems, PATTERNS_FIELD);
  return (
    <Card title="Minimisation">
      <form ref={form} class="stack" onSubmit={submit} key={shown}>
        <p class="small muted" id="minimise-help">
          What is kept of each event, decided before detection and storage; enrichment still reads the values as sent.
          {!pseudonyms && ' This service has no pseudonym secret, so pseudonyms cannot be chosen.'}
        </p>
        {MODE_FIELDS.map(([field, label, modes]) => {
          const messages = problemsAt(problems, `privacy.${field}`);
          return (
            <div key={field}>
              <label>
                {label}
                <select name={field} {...described(`problems-${field}`, messages)}>
                  {modes.map((m) => (
                    <option key={m} value={m} selected={p[field] === m} disabled={m === 'pseudonym' && !pseudonyms && p[field] !== m}>
                      {MODE_TEXT[m]}
                    </option>
                  ))}
                </select>
              </label>
              <FieldProblems id={`problems-${field}`} messages={messages} />
            </div>
          );
        })}
        <label class="inline">
          <input type="checkbox" name="builtin" defaultChecked={p.scrub.builtin} /> Scrub secrets in metadata (password keys, card numbers, tokens, API keys)
        </label>
        <label>
          Metadata keys to scrub (one a line; * any characters)
          <textarea name="keys" rows={3} spellcheck={false} defaultValue={p.scrub.keys.join('\n')} {...described('problems-keys', keyProblems)} />
        </label>
        <FieldProblems id="problems-keys" messages={keyProblems} />
        <label>
          Metadata value patterns to scrub (RE2, one a line)
          <textarea
            name="patterns"
            rows={3}
            spellcheck={false}
            defaultValue={p.scrub.patterns.join('\n')}
            {...described('problems-patterns', patternProblems)}
          />
        </label>
        <FieldProblems id="problems-patterns" messages={patternProblems} />
        <FormEnd
          problems={elsewhere}
          saved={saved}
          saveLabel="Save minimisation"
          resetLabel="Keep everything as sent"
          onReset={() => void save(null, 'Minimisation reset: everything is kept as sent.')}
        />
      </form>
    </Card>
  );
}

const RETENTION_FIELDS: readonly (readonly [RetentionClass, string, number])[] = [
  ['events', 'Events', 1],
  ['alerts', 'Alerts (with their notes)', 7],
  ['audit', 'Audit entries', 1],
];

function RetentionForm({ settings, onSaved }: { settings: PrivacyAnswer; onSaved: () => void }) {
  const max = settings.defaults.retention_max_days;
  const shown = JSON.stringify(settings.retention);
  const { form, problems, elsewhere, saved, save } = usePartForm(
    'retention',
    onSaved,
    RETENTION_FIELDS.map(([kind]) => `retention.${kind}_days`),
    shown,
  );
  const submit = (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    const value: Record<string, number> = {};
    for (const [kind] of RETENTION_FIELDS) {
      const text = String(data.get(kind) ?? '').trim();
      if (text !== '') value[`${kind}_days`] = Number(text);
    }
    void save(value, 'Retention saved.');
  };
  return (
    <Card title="Retention">
      <form ref={form} class="stack" onSubmit={submit} key={shown}>
        <p class="small muted" id="retention-help">
          Days each kind of data is kept. Your plan keeps at most {max} days; an empty field keeps the plan’s days.
        </p>
        {RETENTION_FIELDS.map(([kind, label, least]) => {
          const messages = problemsAt(problems, `retention.${kind}_days`);
          return (
            <div key={kind}>
              <label>
                {label}, days (from {least}, at most {max})
                <input
                  name={kind}
                  type="number"
                  step={1}
                  inputMode="numeric"
                  placeholder={String(max)}
                  defaultValue={settings.retention[`${kind}_days`]?.toString() ?? ''}
                  {...described(`problems-retention-${kind}`, messages, `in-force-${kind}`)}
                />
              </label>
              <p class="small muted" id={`in-force-${kind}`}>
                In force: {settings.effective.retention[kind]} days.
              </p>
              <FieldProblems id={`problems-retention-${kind}`} messages={messages} />
            </div>
          );
        })}
        <FormEnd
          problems={elsewhere}
          saved={saved}
          saveLabel="Save retention"
          resetLabel="Keep the plan’s days"
          onReset={() => void save(null, 'Retention reset to the plan’s days.')}
        />
      </form>
    </Card>
  );
}
