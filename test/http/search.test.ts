import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { expectError, getJson, postEvent, roomyApp } from './support.js';

const HOUR = 3_600_000;

interface Sent {
  readonly event: string;
  readonly actor_id: string;
  readonly ip?: string;
  readonly email?: string;
  readonly host?: string;
  readonly session_id?: string;
  readonly user_agent?: string;
  readonly request?: { method: string; path: string; query?: string; status?: number };
  readonly metadata?: Record<string, unknown>;
  readonly timestamp: number;
}
interface Stored extends Sent {
  readonly id: string;
  /** As sent, in ms (the stored document answers ISO text). */
  readonly timestamp: number;
  readonly risk: { score: number };
}

/** The events of one account: a few distinct ones and fillers, so lists take several pages. */
function eventsOf(base: number): Sent[] {
  const out: Sent[] = [
    {
      event: 'auth.login.failure',
      actor_id: 'dana.smith',
      email: 'dana.smith@example.com',
      ip: '10.1.2.3',
      host: 'web-1',
      session_id: 'sess-1',
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0',
      request: { method: 'POST', path: '/login', query: 'next=/admin' },
      metadata: { device_id: 'dev-1', plan: 'gold', note: 'wire transfer approved' },
      timestamp: base,
    },
    { event: 'auth.login.success', actor_id: 'dana.smith', ip: '10.1.2.3', host: 'web-2', metadata: { plan: 'silver' }, timestamp: base + HOUR },
    { event: 'auth.login.success', actor_id: 'danaher', ip: '10.200.0.9', host: 'web-1', timestamp: base + 2 * HOUR },
    { event: 'auth.login.failure', actor_id: 'bob', ip: '192.168.1.5', metadata: { note: '=cmd|calc' }, timestamp: base + 3 * HOUR },
    { event: 'data.exported', actor_id: 'carol', ip: '2001:db8::5', request: { method: 'GET', path: '/export/all' }, timestamp: base + 4 * HOUR },
    // Classified by its path: tagged inferred:auth.logout.
    {
      event: 'api.request',
      actor_id: 'dana.smith',
      ip: '10.1.2.3',
      request: { method: 'POST', path: '/logout', status: 200 },
      timestamp: base + 4 * HOUR + 60_000,
    },
  ];
  for (let i = 0; i < 20; i++) out.push({ event: 'custom.filler.step', actor_id: `user-${i}`, ip: `203.0.113.${i}`, timestamp: base + (5 + i) * HOUR });
  return out;
}

describe('search: q, sort and time range of GET /v1/events', () => {
  let t: TestApp;
  let a: { id: string; secret: string };
  let b: { id: string; secret: string };
  let stored: Stored[];
  let otherIds: Set<string>;
  let base: number;

  const seed = async (secret: string, events: Sent[]): Promise<Stored[]> => {
    const res = await postEvent(t, secret, { events }, '/v1/events/batch');
    expect(res.statusCode).toBe(202);
    const results = res.json().results as { id: string; tags: string[] }[];
    const out: Stored[] = [];
    for (const [i, { id, tags }] of results.entries())
      out.push({ ...(await getJson(t, secret, `/v1/events/${id}`)).json(), tags, timestamp: (events[i] as Sent).timestamp } as Stored);
    return out;
  };

  beforeAll(async () => {
    t = await roomyApp();
    a = await t.account('pro');
    b = await t.account('pro');
    base = t.clock.now() - 30 * HOUR;
    stored = await seed(a.secret, eventsOf(base));
    // The other account holds the same actors and texts: none of its rows may answer account a.
    otherIds = new Set((await seed(b.secret, eventsOf(base))).map((e) => e.id));
  });
  afterAll(() => t.close());

  /** Every event a query finds, walking all pages; checks that no page holds another account's row. */
  async function search(q: string, extra = '', limit = 7): Promise<{ id: string; risk: { score: number }; timestamp: string }[]> {
    const out: { id: string; risk: { score: number }; timestamp: string }[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const res = await getJson(
        t,
        a.secret,
        `/v1/events?q=${encodeURIComponent(q)}&limit=${limit}${extra}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      out.push(...body.data);
      cursor = body.next_cursor;
      if (cursor === null) break;
    }
    for (const e of out) expect(otherIds.has(e.id)).toBe(false);
    return out;
  }
  const ids = async (q: string, extra = ''): Promise<string[]> => (await search(q, extra)).map((e) => e.id).sort();
  const where = (pred: (e: Stored) => boolean): string[] =>
    stored
      .filter(pred)
      .map((e) => e.id)
      .sort();

  it('field:value matches the whole value, on columns and on document fields', async () => {
    expect(await ids('actor_id:dana.smith')).toEqual(where((e) => e.actor_id === 'dana.smith'));
    expect(await ids('email:"dana.smith@example.com"')).toEqual(where((e) => e.email === 'dana.smith@example.com'));
    expect(await ids('host:web-1')).toEqual(where((e) => e.host === 'web-1'));
    expect(await ids('session_id:sess-1 device_id:dev-1')).toEqual(where((e) => e.session_id === 'sess-1'));
    expect(await ids('request.path:/login request.method:POST')).toEqual(where((e) => e.request?.path === '/login'));
    expect(await ids('metadata.plan:gold')).toEqual(where((e) => e.metadata?.plan === 'gold'));
    expect(await ids('type:data.exported')).toEqual(where((e) => e.event === 'data.exported'));
    expect(await ids('actor_id:dana')).toEqual([]);
    expect(await ids(`id:${stored[2]?.id}`)).toEqual([stored[2]?.id]);
  });

  it('tag: matches one of an event’s tags, exactly or by a pattern, alone or with other terms', async () => {
    const tagsOf = (e: Stored) => (e as unknown as { tags?: string[] }).tags ?? [];
    const tags = [...new Set(stored.flatMap(tagsOf))];
    expect(tags.length).toBeGreaterThan(0);
    for (const tag of tags) {
      expect(await ids(`tag:"${tag}"`)).toEqual(where((e) => tagsOf(e).includes(tag)));
      expect(await ids(`tag:"${tag}" actor_id:dana*`)).toEqual(where((e) => tagsOf(e).includes(tag) && (e.actor_id ?? '').startsWith('dana')));
    }
    const [first] = tags as [string];
    expect(await ids(`tag:${first.slice(0, 3)}*`)).toEqual(where((e) => tagsOf(e).some((tag) => tag.startsWith(first.slice(0, 3)))));
    expect(await ids('tag:"no such tag"')).toEqual([]);
  });

  it('wildcards * and ? match any characters and one character', async () => {
    expect(await ids('actor_id:dana*')).toEqual(where((e) => e.actor_id.startsWith('dana')));
    expect(await ids('actor_id:*ana*')).toEqual(where((e) => e.actor_id.includes('ana')));
    expect(await ids('actor_id:bo?')).toEqual(where((e) => e.actor_id === 'bob'));
    expect(await ids('type:auth.login.*')).toEqual(where((e) => e.event.startsWith('auth.login.')));
    expect(await ids('user_agent:*Firefox*')).toEqual(where((e) => e.user_agent?.includes('Firefox') === true));
    // A quoted value and an escaped star are literal.
    expect(await ids('actor_id:"dana*"')).toEqual([]);
    expect(await ids('actor_id:dana\\*')).toEqual([]);
  });

  it('a pattern that starts with a wildcard finds the same rows through the trigram index, and without it when its literals are short', async () => {
    expect(await ids('email:*smith*')).toEqual(where((e) => e.email?.includes('smith') === true));
    expect(await ids('actor_id:*ana.smi*')).toEqual(where((e) => e.actor_id.includes('ana.smi')));
    // The index matches regardless of case; the pattern does not.
    expect(await ids('actor_id:*SMITH*')).toEqual([]);
    expect(await ids('actor_id:*ana*smi*')).toEqual(where((e) => /ana.*smi/.test(e.actor_id)));
    expect(await ids('host:*eb-1')).toEqual(where((e) => e.host?.endsWith('eb-1') === true));
    expect(await ids('request.path:*xpor*')).toEqual(where((e) => e.request?.path.includes('xpor') === true));
    expect(await ids('user_agent:*x86_64*')).toEqual(where((e) => e.user_agent?.includes('x86_64') === true));
    expect(await ids('user_agent:*x86%64*')).toEqual([]);
    expect(await ids('metadata.note:*ransfer*')).toEqual(where((e) => e.metadata?.note === 'wire transfer approved'));
    expect(await ids('(email:*smith* OR host:*eb-2) -type:api.request')).toEqual(
      where((e) => (e.email?.includes('smith') === true || e.host === 'web-2') && e.event !== 'api.request'),
    );
    // Literals shorter than a trigram (3 characters) name nothing the index can look up.
    expect(await ids('actor_id:*an*')).toEqual(where((e) => e.actor_id.includes('an')));
    expect(await ids('actor_id:*a?a*')).toEqual(where((e) => /a.a/.test(e.actor_id)));
    expect(await ids('host:*1')).toEqual(where((e) => e.host?.endsWith('1') === true));
    expect(await ids('email:*zzz*')).toEqual([]);
  });

  it('free text finds words of the message-like fields, phrases in order, a trailing * as a prefix', async () => {
    const noted = where((e) => e.metadata?.note === 'wire transfer approved');
    expect(await ids('transfer')).toEqual(noted);
    expect(await ids('TRANSFER')).toEqual(noted);
    expect(await ids('"wire transfer"')).toEqual(noted);
    expect(await ids('"transfer wire"')).toEqual([]);
    expect(await ids('transf*')).toEqual(noted);
    expect(await ids('smith')).toEqual(where((e) => e.actor_id === 'dana.smith'));
    expect(await ids('"10.200.0.9"')).toEqual(where((e) => e.ip === '10.200.0.9'));
    expect(await ids('admin')).toEqual(where((e) => e.request?.query === 'next=/admin'));
    expect(await ids('nothingmatchesthis')).toEqual([]);
  });

  it('ranges over numbers and times, a date alone being its whole day', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await ids(`occurred_at:>=${iso(base + 3 * HOUR)}`)).toEqual(where((e) => e.timestamp >= base + 3 * HOUR));
    expect(await ids(`occurred_at:>${base + 3 * HOUR}`)).toEqual(where((e) => e.timestamp > base + 3 * HOUR));
    expect(await ids(`occurred_at:[${iso(base + HOUR)} TO ${iso(base + 4 * HOUR)}]`)).toEqual(
      where((e) => e.timestamp >= base + HOUR && e.timestamp <= base + 4 * HOUR),
    );
    expect(await ids(`occurred_at:{${iso(base + HOUR)} TO ${iso(base + 4 * HOUR)}}`)).toEqual(
      where((e) => e.timestamp > base + HOUR && e.timestamp < base + 4 * HOUR),
    );
    const day = iso(base).slice(0, 10);
    const dayStart = Date.parse(day);
    expect(await ids(`occurred_at:${day}`)).toEqual(where((e) => e.timestamp >= dayStart && e.timestamp < dayStart + 24 * HOUR));
    const risks = stored.map((e) => e.risk.score);
    const mid = [...risks].sort((x, y) => x - y)[Math.floor(risks.length / 2)] as number;
    expect(await ids(`risk:>=${mid}`)).toEqual(where((e) => e.risk.score >= mid));
    expect(await ids(`risk:<${mid}`)).toEqual(where((e) => e.risk.score < mid));
    expect(await ids(`risk:[${mid} TO *]`)).toEqual(where((e) => e.risk.score >= mid));
  });

  it('ip: an address, a CIDR block (IPv4 and IPv6) or a pattern', async () => {
    expect(await ids('ip:10.0.0.0/8')).toEqual(where((e) => e.ip?.startsWith('10.') === true));
    expect(await ids('ip:10.1.0.0/16')).toEqual(where((e) => e.ip === '10.1.2.3'));
    expect(await ids('ip:10.0.0.0/9')).toEqual(where((e) => e.ip === '10.1.2.3'));
    expect(await ids('ip:10.128.0.0/9')).toEqual(where((e) => e.ip === '10.200.0.9'));
    expect(await ids('ip:2001:db8::/32')).toEqual(where((e) => e.ip === '2001:db8::5'));
    expect(await ids('ip:2001:DB8::5')).toEqual(where((e) => e.ip === '2001:db8::5'));
    expect(await ids('ip:203.0.113.1*')).toEqual(where((e) => e.ip?.startsWith('203.0.113.1') === true));
  });

  it('AND, OR, NOT, - and parentheses combine terms; terms side by side are ANDed', async () => {
    expect(await ids('actor_id:dana.smith OR actor_id:bob')).toEqual(where((e) => e.actor_id === 'dana.smith' || e.actor_id === 'bob'));
    expect(await ids('type:auth.login.* -actor_id:bob')).toEqual(where((e) => e.event.startsWith('auth.login.') && e.actor_id !== 'bob'));
    expect(await ids('type:auth.login.* AND NOT actor_id:dana*')).toEqual(where((e) => e.event.startsWith('auth.login.') && !e.actor_id.startsWith('dana')));
    expect(await ids('(host:web-1 OR host:web-2) type:auth.login.success')).toEqual(
      where((e) => (e.host === 'web-1' || e.host === 'web-2') && e.event === 'auth.login.success'),
    );
    // Events without a host pass NOT host:…
    expect(await ids('NOT host:web-1')).toEqual(where((e) => e.host !== 'web-1'));
  });

  it('combines with the older filters and the time range', async () => {
    expect(await ids('actor_id:dana*', '&type=auth.login.success')).toEqual(where((e) => e.actor_id.startsWith('dana') && e.event === 'auth.login.success'));
    expect(await ids('type:auth.*', `&since=${base + HOUR}&until=${base + 3 * HOUR}`)).toEqual(
      where((e) => e.event.startsWith('auth.') && e.timestamp >= base + HOUR && e.timestamp < base + 3 * HOUR),
    );
  });

  it('sorts by event time or risk, either way, with cursors stable across pages', async () => {
    const byTime = await search('', '&sort=occurred_at', 4);
    expect(byTime.map((e) => e.id)).toEqual([...stored].sort((x, y) => x.timestamp - y.timestamp).map((e) => e.id));
    const newest = await search('', '', 4);
    expect(newest.map((e) => e.id)).toEqual([...stored].sort((x, y) => y.timestamp - x.timestamp).map((e) => e.id));
    for (const sort of ['-risk', 'risk']) {
      const list = await search('', `&sort=${sort}`, 3);
      expect(list.map((e) => e.id).sort()).toEqual(where(() => true));
      const sign = sort === '-risk' ? -1 : 1;
      for (let i = 1; i < list.length; i++) {
        const [p, c] = [list[i - 1], list[i]] as [(typeof list)[number], (typeof list)[number]];
        const d = sign * (c.risk.score - p.risk.score);
        expect(d > 0 || (d === 0 && sign * (c.id < p.id ? -1 : 1) > 0)).toBe(true);
      }
    }
    const other = await getJson(t, a.secret, '/v1/events?sort=-risk&cursor=evt_not_a_sorted_cursor');
    expect(expectError(other, 400, 'INVALID_REQUEST').details?.[0]?.field).toBe('cursor');
  });

  it('a query it cannot read is a 400 naming q and the position', async () => {
    const cases: [string, number][] = [
      ['actor_id:', 10],
      ['(actor_id:bob', 1],
      ['actor_id:bob)', 13],
      ['nope:1', 1],
      ['risk:abc', 6],
      ['risk:[1 TO', 6],
      ['"unclosed', 1],
      ['actor_id:bob OR', 16],
      ['AND bob', 1],
      ['*dana*', 1],
      ['ip:10.0.0.0/99', 4],
      ['occurred_at:>yesterday', 14],
    ];
    for (const [q, position] of cases) {
      const res = await getJson(t, a.secret, `/v1/events?q=${encodeURIComponent(q)}`);
      const body = expectError(res, 400, 'INVALID_REQUEST');
      expect(body.details?.[0]?.field, q).toBe('q');
      expect(body.details?.[0]?.message, q).toMatch(new RegExp(`at position ${position}$`));
    }
  });

  it('hostile queries are bounded: length, terms, nesting and wildcards', async () => {
    const bad = async (q: string) => expectError(await getJson(t, a.secret, `/v1/events?q=${encodeURIComponent(q)}`), 400, 'INVALID_REQUEST');
    await bad('a'.repeat(1001));
    await bad(Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '));
    await bad(`${'('.repeat(9)}bob${')'.repeat(9)}`);
    await bad(`${'NOT '.repeat(9)}bob`);
    await bad(`actor_id:${'*a'.repeat(17)}`);
    await bad('('.repeat(1000));
    // At the bounds the query runs, and a pattern of many wildcards over every row still answers.
    expect(await ids(`actor_id:${'*a'.repeat(16)}`)).toEqual([]);
    expect(await ids(`${'('.repeat(8)}actor_id:bob${')'.repeat(8)}`)).toEqual(where((e) => e.actor_id === 'bob'));
    expect(await ids(Array.from({ length: 32 }, () => 'actor_id:*a*').join(' OR '))).toEqual(where((e) => e.actor_id.includes('a')));
    const nul = await getJson(t, a.secret, `/v1/events?q=${encodeURIComponent('bob\u0000')}`);
    expectError(nul, 400, 'INVALID_REQUEST');
  });

  it('another account’s rows never answer, whatever the query', async () => {
    const mine = new Set(stored.map((e) => e.id));
    for (const q of ['actor_id:dana.smith', 'transfer', 'ip:10.0.0.0/8', 'type:*', 'NOT actor_id:nobody']) {
      const found = await ids(q);
      expect(found.length).toBeGreaterThan(0);
      for (const id of found) expect(mine.has(id)).toBe(true);
    }
    const fromB = (await getJson(t, b.secret, `/v1/events?q=${encodeURIComponent(`id:${stored[0]?.id}`)}`)).json();
    expect(fromB.data).toEqual([]);
  });

  it('a histogram counts the events a search finds per span of event time', async () => {
    const since = base;
    const until = base + 25 * HOUR;
    const res = await getJson(t, a.secret, `/v1/events/histogram?q=${encodeURIComponent('type:auth.login.*')}&since=${since}&until=${until}&buckets=5`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.bucket_ms).toBe(5 * HOUR);
    expect(body.since).toBe(new Date(since).toISOString());
    expect(body.buckets).toHaveLength(5);
    const expected = [0, 0, 0, 0, 0];
    for (const e of stored)
      if (e.event.startsWith('auth.login.') && e.timestamp < until) (expected[Math.floor((e.timestamp - since) / (5 * HOUR))] as number)++;
    expect(body.buckets.map((b: { count: number }) => b.count)).toEqual(expected);
    expect(body.buckets[1].at).toBe(new Date(since + 5 * HOUR).toISOString());
    // The last 24 hours by default, 60 buckets; bounds are checked.
    const day = (await getJson(t, a.secret, '/v1/events/histogram')).json();
    expect(day.buckets).toHaveLength(60);
    expect(Date.parse(day.until) - Date.parse(day.since)).toBe(24 * HOUR);
    expectError(await getJson(t, a.secret, '/v1/events/histogram?buckets=201'), 400, 'INVALID_REQUEST');
    expectError(await getJson(t, a.secret, `/v1/events/histogram?since=${until}&until=${since}`), 400, 'INVALID_REQUEST');
    expectError(await getJson(t, a.secret, '/v1/events/histogram?q=nope:1'), 400, 'INVALID_REQUEST');
    const other = (await getJson(t, b.secret, `/v1/events/histogram?q=type:nothing.at.all&since=${since}&until=${until}&buckets=5`)).json();
    expect(other.buckets.map((x: { count: number }) => x.count)).toEqual([0, 0, 0, 0, 0]);
  });

  it('exports stream every matching event, past one page of the store, as NDJSON or formula-safe CSV, and only the account’s own', async () => {
    const c = await t.account('pro');
    const d = await t.account('pro');
    const many = Array.from({ length: 520 }, (_, i) => ({
      event: 'custom.export.row',
      actor_id: `exp-${i}`,
      metadata: { note: i === 7 ? '=HYPERLINK("x")' : 'plain, "quoted"' },
    }));
    for (const key of [c.secret, d.secret])
      for (let i = 0; i < many.length; i += 100) expect((await postEvent(t, key, { events: many.slice(i, i + 100) }, '/v1/events/batch')).statusCode).toBe(202);
    const res = await t.vigil.app.inject({ method: 'GET', url: '/v1/events/export?format=ndjson&q=type:custom.export.row', headers: bearer(c.secret) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/ndjson/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="vigil-events-.*\.ndjson"$/);
    const rows = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; actor_id: string });
    expect(rows).toHaveLength(520);
    expect(new Set(rows.map((r) => r.actor_id))).toEqual(new Set(many.map((e) => e.actor_id)));
    const own = new Set((await allIds(c.secret)).values());
    for (const r of rows) expect(own.has(r.id)).toBe(true);

    const csv = await t.vigil.app.inject({ method: 'GET', url: '/v1/events/export?format=csv&sort=occurred_at', headers: bearer(c.secret) });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'id,occurred_at,received_at,type,actor_id,email,ip,country,risk,tags,host,session_id,user_agent,request.method,request.path,request.query',
    );
    expect(lines).toHaveLength(521);
    const ids = new Set(lines.slice(1).map((l) => l.split(',')[0]));
    expect(ids).toEqual(own);
    // Every stored event's metadata stays out of the CSV's columns; a formula in a column is defused.
    const formula = await t.vigil.app.inject({
      method: 'GET',
      url: `/v1/events/export?format=csv&q=${encodeURIComponent('actor_id:exp-7')}`,
      headers: bearer(c.secret),
    });
    expect(formula.body.split('\r\n')[1]).toContain(',exp-7,');
    const attack = await postEvent(t, c.secret, {
      event: 'custom.export.formula',
      actor_id: '=cmd|calc',
      host: '@SUM(1)',
      session_id: '+1',
      email: 'a"b,c@example.com',
    });
    expect(attack.statusCode).toBe(202);
    const defused = await t.vigil.app.inject({ method: 'GET', url: '/v1/events/export?format=csv&q=type:custom.export.formula', headers: bearer(c.secret) });
    const line = defused.body.split('\r\n')[1] as string;
    expect(line).toContain(",'=cmd|calc,");
    expect(line).toContain(",'@SUM(1),'+1,");
    expect(line).toContain(',"a""b,c@example.com",');
    expectError(await getJson(t, c.secret, '/v1/events/export?format=xml'), 400, 'INVALID_REQUEST');
  });

  /** Every id the account's event list answers. */
  async function allIds(secret: string): Promise<Set<string>> {
    const out = new Set<string>();
    let cursor: string | null = null;
    do {
      const res = await getJson(t, secret, `/v1/events?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const body = res.json();
      for (const e of body.data) out.add(e.id);
      cursor = body.next_cursor;
    } while (cursor);
    return out;
  }
});
