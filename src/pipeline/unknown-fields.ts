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

/** Edits (insert, delete, substitute, swap two neighbours) between two short names. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * Suggests defined fields for unknown ones. `eventFields` are the event's own fields,
 * `requestFields` those of `request` (suggested as `request.<name>`).
 */
export class FieldSuggester {
  /** Every defined path by its normalised form, and by its last segment's normalised form. */
  private readonly byNormal = new Map<string, string>();
  private readonly paths: readonly string[];

  constructor(eventFields: readonly string[], requestFields: readonly string[]) {
    const paths = [...eventFields.filter((f) => f !== 'request'), ...requestFields.map((f) => `request.${f}`)];
    this.paths = paths;
    for (const path of paths) this.byNormal.set(normal(path), path);
    for (const f of requestFields) this.byNormal.set(`request${normal(f)}`, `request.${f}`);
  }

  /** The defined field an unknown one most likely meant; `inRequest` when it was a member of `request`. */
  suggest(name: string, inRequest: boolean): string | undefined {
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
    const allowed = n.length < 7 ? 1 : 2;
    let best: string | undefined;
    let bestDistance = allowed + 1;
    for (const path of this.paths) {
      const candidates = inRequest || !path.startsWith('request.') ? [normal(path)] : [normal(path), normal(path.slice('request.'.length))];
      for (const c of candidates) {
        const d = editDistance(n, c);
        if (d < bestDistance) {
          bestDistance = d;
          best = path;
        }
      }
    }
    return best;
  }

  private requestSynonym(n: string): string | undefined {
    const target = SYNONYMS[n];
    return target?.startsWith('request.') ? target : undefined;
  }
}

/** The warning for one unknown field at `path`. */
export function fieldWarning(path: string, suggestion: string | undefined): FieldWarning {
  const keptIn = `metadata.extra.${path}`;
  const message = `${path} is not an event field; it was kept in ${keptIn}${suggestion === undefined ? '' : `. Did you mean ${suggestion}?`}`;
  return suggestion === undefined ? { field: path, kept_in: keptIn, message } : { field: path, kept_in: keptIn, did_you_mean: suggestion, message };
}
