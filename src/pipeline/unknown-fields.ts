/**
 * Fields an event sends that Vigil does not define. The rule is the same at every level whose
 * members Vigil defines (the event itself and `request`): an unknown field is neither an error
 * nor dropped; it is kept under `metadata.extra` by its path (`actorId`, `request.status_code`)
 * and named in the answer's `warnings`, with the field it most likely meant. `metadata` is
 * free-form at every depth, so nothing in it is unknown.
 */

/** One unknown field, as the 202 answer lists it. */
export interface FieldWarning {
  /** Its path in the event as sent: `actorId`, `request.status_code`. */
  readonly field: string;
  /** Where it is stored: `metadata.extra` plus the key. */
  readonly kept_in: string;
  /** The defined field it most likely meant (for /metrics, its family). */
  readonly did_you_mean?: string;
  readonly message: string;
}

/** The /metrics label of warnings whose field resembles no defined one. */
export const UNRECOGNISED_FAMILY = 'unrecognised';

/** The metrics family of a warning: the field it most likely meant, a bounded set of names. */
export const familyOf = (warning: FieldWarning): string => warning.did_you_mean ?? UNRECOGNISED_FAMILY;

/** Lower case, letters and digits only: `actorId`, `actor-id` and `ACTOR_ID` compare equal. */
const normal = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Names integrators use for a defined field, by normalised name; request fields by their full path. */
const SYNONYMS: Readonly<Record<string, string>> = {
  ipaddress: 'ip',
  ipaddr: 'ip',
  clientip: 'ip',
  remoteip: 'ip',
  remoteaddr: 'ip',
  remoteaddress: 'ip',
  sourceip: 'ip',
  srcip: 'ip',
  userip: 'ip',
  xforwardedfor: 'ip',
  ua: 'user_agent',
  browser: 'user_agent',
  userid: 'actor_id',
  uid: 'actor_id',
  user: 'actor_id',
  username: 'actor_id',
  actor: 'actor_id',
  principal: 'actor_id',
  subject: 'actor_id',
  mail: 'email',
  emailaddress: 'email',
  useremail: 'email',
  session: 'session_id',
  sid: 'session_id',
  type: 'event',
  eventtype: 'event',
  eventname: 'event',
  id: 'event_id',
  idempotencykey: 'event_id',
  time: 'timestamp',
  ts: 'timestamp',
  date: 'timestamp',
  datetime: 'timestamp',
  occurredat: 'timestamp',
  createdat: 'timestamp',
  eventtime: 'timestamp',
  hostname: 'host',
  server: 'host',
  meta: 'metadata',
  data: 'metadata',
  context: 'metadata',
  properties: 'metadata',
  props: 'metadata',
  attributes: 'metadata',
  details: 'metadata',
  password: 'password_sha1',
  passwordhash: 'password_sha1',
  path: 'request.path',
  url: 'request.path',
  uri: 'request.path',
  endpoint: 'request.path',
  route: 'request.path',
  requestpath: 'request.path',
  requesturl: 'request.path',
  method: 'request.method',
  httpmethod: 'request.method',
  verb: 'request.method',
  requestmethod: 'request.method',
  status: 'request.status',
  statuscode: 'request.status',
  code: 'request.status',
  httpstatus: 'request.status',
  httpstatuscode: 'request.status',
  responsestatus: 'request.status',
  responsecode: 'request.status',
  query: 'request.query',
  querystring: 'request.query',
  qs: 'request.query',
  search: 'request.query',
};

/**
 * The longest name an unknown field may have (400 beyond, before any suggestion is looked for):
 * every defined field is a short word, and the typing-error search costs the product of the
 * two names' lengths.
 */
export const MAX_FIELD_NAME_LENGTH = 100;

/**
 * Edit-distance cells one request may compute for typing-error suggestions: a few hundred
 * distinct misspelt names. Past it, a name still gets its case, separator and synonym
 * suggestions (map lookups) but no typing-error one.
 */
export const SUGGESTION_CELLS_PER_REQUEST = 200_000;

let cellsComputed = 0;

/** Edit-distance cells computed by this process so far: the suggester's whole cost, as a count. */
export const editDistanceCells = (): number => cellsComputed;

/** What one request may still spend on typing-error suggestions, and the names it already asked about. */
export class SuggestionBudget {
  private remaining: number;
  /** Typing-error answers by normalised name (with the level it was asked for): a batch repeats its names. */
  private answers?: Map<string, string | undefined>;

  constructor(cells = SUGGESTION_CELLS_PER_REQUEST) {
    this.remaining = cells;
  }

  /** Takes `cells` from the budget, or nothing when it does not hold that many. */
  take(cells: number): boolean {
    if (cells > this.remaining) return false;
    this.remaining -= cells;
    return true;
  }

  get known(): Map<string, string | undefined> {
    return (this.answers ??= new Map());
  }
}

/** Rows of the edit-distance table, reused: names are short and the table small. */
let rows: Int32Array[] = [new Int32Array(0), new Int32Array(0), new Int32Array(0)];

/** Edits (insert, delete, substitute, swap two neighbours) between two short names. */
function editDistance(a: string, b: string): number {
  cellsComputed += a.length * b.length;
  if ((rows[0] as Int32Array).length <= b.length) rows = [0, 1, 2].map(() => new Int32Array(b.length + 1));
  // Three rolling rows: two rows back (for the swap), the previous one and the current one.
  let [older, prev, row] = rows as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (older[j - 2] as number) + 1);
      row[j] = d;
    }
    [older, prev, row] = [prev, row, older];
  }
  return prev[b.length] as number;
}

interface Candidate {
  /** The normalised name a sent name is compared with. */
  readonly normal: string;
  /** The defined field it stands for. */
  readonly path: string;
}

/**
 * Suggests defined fields for unknown ones. `eventFields` are the event's own fields,
 * `requestFields` those of `request` (suggested as `request.<name>`).
 */
export class FieldSuggester {
  /** Every defined path by its normalised form, and by its last segment's normalised form. */
  private readonly byNormal = new Map<string, string>();
  /** Typing-error candidates for a top-level name (request members also by their own name) and for a member of `request`. */
  private readonly topCandidates: readonly Candidate[];
  private readonly requestCandidates: readonly Candidate[];

  constructor(eventFields: readonly string[], requestFields: readonly string[]) {
    const paths = [...eventFields.filter((f) => f !== 'request'), ...requestFields.map((f) => `request.${f}`)];
    for (const path of paths) this.byNormal.set(normal(path), path);
    for (const f of requestFields) this.byNormal.set(`request${normal(f)}`, `request.${f}`);
    this.requestCandidates = paths.map((path) => ({ normal: normal(path), path }));
    this.topCandidates = paths.flatMap((path) =>
      path.startsWith('request.')
        ? [
            { normal: normal(path), path },
            { normal: normal(path.slice('request.'.length)), path },
          ]
        : [{ normal: normal(path), path }],
    );
  }

  /**
   * The defined field an unknown one most likely meant; `inRequest` when it was a member of
   * `request`. Typing errors are looked for within the request's `budget`.
   */
  suggest(name: string, inRequest: boolean, budget: SuggestionBudget = new SuggestionBudget()): string | undefined {
    if (name.length > MAX_FIELD_NAME_LENGTH) return undefined;
    const n = normal(name);
    if (n === '') return undefined;
    if (inRequest) {
      const member = this.byNormal.get(`request${n}`) ?? this.requestSynonym(n);
      if (member !== undefined) return member;
    }
    const exact = this.byNormal.get(n) ?? SYNONYMS[n];
    if (exact !== undefined) return exact;
    // A typo: one edit in a short name, two in a longer one.
    if (n.length < 4) return undefined;
    const key = inRequest ? `r${n}` : `e${n}`;
    if (budget.known.has(key)) return budget.known.get(key);
    const found = this.typo(n, n.length < 7 ? 1 : 2, inRequest ? this.requestCandidates : this.topCandidates, budget);
    budget.known.set(key, found);
    return found;
  }

  /**
   * The closest candidate within `allowed` edits. Only candidates whose length is within
   * `allowed` of the name's can be that close, so no other is compared; the comparisons are
   * made only when the budget holds all of them.
   */
  private typo(n: string, allowed: number, candidates: readonly Candidate[], budget: SuggestionBudget): string | undefined {
    let cells = 0;
    for (const c of candidates) if (Math.abs(c.normal.length - n.length) <= allowed) cells += n.length * c.normal.length;
    if (cells === 0 || !budget.take(cells)) return undefined;
    let best: string | undefined;
    let bestDistance = allowed + 1;
    for (const c of candidates) {
      if (Math.abs(c.normal.length - n.length) > allowed) continue;
      const d = editDistance(n, c.normal);
      if (d < bestDistance) {
        bestDistance = d;
        best = c.path;
      }
    }
    return best;
  }

  private requestSynonym(n: string): string | undefined {
    const target = SYNONYMS[n];
    return target?.startsWith('request.') ? target : undefined;
  }
}

/**
 * The warning for one unknown field at `path`, kept in `keptIn` (`metadata.extra.<path>`, or the
 * next free name when the event's own metadata.extra already holds that one).
 */
export function fieldWarning(path: string, suggestion: string | undefined, keptIn = `metadata.extra.${path}`): FieldWarning {
  const where = keptIn === `metadata.extra.${path}` ? `it was kept in ${keptIn}` : `metadata.extra.${path} was already set, so it was kept in ${keptIn}`;
  const message = `${path} is not an event field; ${where}${suggestion === undefined ? '' : `. Did you mean ${suggestion}?`}`;
  return suggestion === undefined ? { field: path, kept_in: keptIn, message } : { field: path, kept_in: keptIn, did_you_mean: suggestion, message };
}
