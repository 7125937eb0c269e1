import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { BREACHED_SHA1, STUFFED_ACTORS, dayApp, type DayApp } from './investigation-day.js';
import { expectError, getJson } from './support.js';

interface Group {
  key: string;
  type: string;
  count: number;
  events: number;
  shared: { by: string; value: string };
  subjects: string[];
  statuses: Record<string, number>;
  alert_ids: string[];
}

/** Alert campaigns and bulk triage over one seeded day. */
describe('alert campaigns and bulk triage', () => {
  let d: DayApp;
  beforeAll(async () => {
    d = await dayApp();
  }, 60_000);
  afterAll(() => d?.close());

  const ok = async (path: string, secret = d.acct.secret) => {
    const res = await getJson(d.t, secret, path);
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
    return res.json();
  };
  const bulk = (payload: Record<string, unknown>, secret = d.acct.secret) =>
    d.t.vigil.app.inject({ method: 'POST', url: '/v1/alerts/bulk', headers: bearer(secret), payload });
  const groups = async (query = '') => (await ok(`/v1/alerts/groups?limit=500&${query}`)).data as Group[];

  it('groups the stuffing run into one row: 30 breached-password alerts sharing one /24; every alert is in one group', async () => {
    const stuffing = await groups('type=auth.breached_password');
    expect(stuffing).toHaveLength(1);
    expect(stuffing[0]).toMatchObject({
      key: 'network|auth.breached_password|203.0.113.0/24',
      type: 'auth.breached_password',
      severity: 'medium',
      count: 30,
      events: 30,
      shared: { by: 'network', value: '203.0.113.0/24' },
      statuses: { open: 30 },
    });
    expect(stuffing[0]?.subjects).toHaveLength(10);
    expect(new Set(stuffing[0]?.alert_ids).size).toBe(30);

    const all = await groups();
    const alerts = (await ok('/v1/alerts?limit=500')).data as { id: string }[];
    expect(all.flatMap((g) => g.alert_ids).sort()).toEqual(alerts.map((a) => a.id).sort());
    const byKey = new Map(all.map((g) => [g.key, g]));
    // An address alone in its network is a source; the takeover's alerts without one follow their newest event's address.
    expect(byKey.get('source|network.blocklisted_ip|91.240.118.172')).toMatchObject({ count: 1, shared: { by: 'source' } });
    expect(byKey.get('source|chain.account_takeover|91.240.118.172')).toMatchObject({ count: 1 });
    expect(byKey.get('source|host.ssh_brute_force|203.0.113.200')).toMatchObject({ count: 1, subjects: ['host:web1'] });
    // Pages: the cursor walks the same list.
    const first = await ok('/v1/alerts/groups?limit=2');
    const second = await ok(`/v1/alerts/groups?limit=2&cursor=${first.next_cursor}`);
    expect([...first.data, ...second.data].map((g: Group) => g.key)).toEqual(all.slice(0, 4).map((g) => g.key));
    // Another account has no groups.
    expect((await ok('/v1/alerts/groups', d.other.secret)).data).toEqual([]);
  });

  it('searches, sorts, counts and exports the alert list with the events’ grammar', async () => {
    type Alert = { id: string; type: string; severity: string; first_seen: string; last_seen: string };
    const all = (await ok('/v1/alerts?limit=500')).data as Alert[];
    const walk = async (query: string): Promise<Alert[]> => {
      const out: Alert[] = [];
      let cursor: string | null = null;
      do {
        const page = await ok(`/v1/alerts?limit=7&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        out.push(...(page.data as Alert[]));
        cursor = page.next_cursor;
      } while (cursor !== null);
      return out;
    };
    const idsOf = (alerts: Alert[]) => alerts.map((a) => a.id).sort();
    expect(idsOf(await walk('q=type:auth.breached_password'))).toEqual(idsOf(all.filter((a) => a.type === 'auth.breached_password')));
    expect(idsOf(await walk(`q=${encodeURIComponent('severity:high OR severity:critical')}`))).toEqual(
      idsOf(all.filter((a) => a.severity === 'high' || a.severity === 'critical')),
    );
    expect((await ok('/v1/alerts?q=type:auth.breached_password', d.other.secret)).data).toEqual([]);
    const rank: Record<string, number> = { critical: 4, high: 3, medium: 2, low: 1 };
    const bySeverity = await walk('sort=-severity');
    expect(idsOf(bySeverity)).toEqual(idsOf(all));
    for (let i = 1; i < bySeverity.length; i++) expect(rank[bySeverity[i - 1]!.severity]).toBeGreaterThanOrEqual(rank[bySeverity[i]!.severity]!);
    const byLastSeen = await walk('sort=last_seen');
    expect(idsOf(byLastSeen)).toEqual(idsOf(all));
    for (let i = 1; i < byLastSeen.length; i++) expect(byLastSeen[i - 1]!.last_seen <= byLastSeen[i]!.last_seen).toBe(true);
    expectError(await getJson(d.t, d.acct.secret, '/v1/alerts?q=severity%3A'), 400, 'INVALID_REQUEST');
    expectError(await getJson(d.t, d.acct.secret, '/v1/alerts?sort=-severity&cursor=nonsense'), 400, 'INVALID_REQUEST');

    const firsts = all.map((a) => Date.parse(a.first_seen));
    const since = new Date(Math.min(...firsts)).toISOString();
    const until = new Date(Math.max(...firsts) + 1).toISOString();
    const histogram = await ok(`/v1/alerts/histogram?since=${since}&until=${until}&buckets=24`);
    expect(histogram.buckets).toHaveLength(24);
    expect(histogram.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0)).toBe(all.length);
    const stuffing = await ok(`/v1/alerts/histogram?since=${since}&until=${until}&q=type:auth.breached_password`);
    expect(stuffing.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0)).toBe(30);

    const ndjson = await getJson(d.t, d.acct.secret, '/v1/alerts/export?format=ndjson&q=type:auth.breached_password');
    expect(ndjson.headers['content-disposition']).toMatch(/^attachment; filename="vigil-alerts-.*\.ndjson"$/);
    expect(
      ndjson.body
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as Alert).type),
    ).toEqual(Array(30).fill('auth.breached_password'));
    const csv = await getJson(d.t, d.acct.secret, '/v1/alerts/export?format=csv');
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,type,severity,status,subject,actor_id,count,first_seen,last_seen,assignee');
    expect(lines).toHaveLength(all.length + 1);
  });

  it('resolves a whole group with a note: one audit entry and one note per alert; again, nothing changes; the next sighting opens a new alert', async () => {
    const [group] = await groups('type=auth.breached_password');
    const hook = await d.t.vigil.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: bearer(d.acct.secret),
      payload: { url: 'http://127.0.0.1:9/hook', filters: { alert_types: ['auth.breached_password'] } },
    });
    expect({ status: hook.statusCode, body: hook.body }).toMatchObject({ status: 201 });
    const res = await bulk({ group: group?.key, status: 'resolved', note: 'stuffing run from 203.0.113.0/24, passwords reset' });
    expect(res.json()).toEqual({ updated: 30, unchanged: 0, not_found: [] });
    expect((await ok('/v1/alerts?type=auth.breached_password&status=open')).data).toEqual([]);
    expect((await ok('/v1/alerts?type=auth.breached_password&status=resolved&limit=100')).data).toHaveLength(30);
    const audit = (await ok('/v1/audit?action=alert.status_changed&limit=100')).data as { target: { id: string }; changes: unknown }[];
    expect(audit.map((e) => e.target.id).sort()).toEqual([...(group?.alert_ids ?? [])].sort());
    expect(audit[0]?.changes).toEqual({ status: { before: 'open', after: 'resolved' } });
    const deliveries = (await ok(`/v1/webhooks/${hook.json().id}/deliveries?limit=100`)).data as { event: string; alert_id: string }[];
    expect(
      deliveries
        .filter((x) => x.event === 'alert.status_changed')
        .map((x) => x.alert_id)
        .sort(),
    ).toEqual([...(group?.alert_ids ?? [])].sort());
    const notes = await ok(`/dashboard/api/alerts/${group?.alert_ids[0]}/notes`);
    expect(notes.data).toMatchObject([{ status: 'resolved', note: 'stuffing run from 203.0.113.0/24, passwords reset' }]);

    expect((await bulk({ group: group?.key, status: 'resolved' })).json()).toEqual({ updated: 0, unchanged: 30, not_found: [] });
    expect((await ok('/v1/audit?action=alert.status_changed&limit=100')).data).toHaveLength(30);

    // Resolving forgot the detection state: the same account's password tried again opens a new alert.
    const again = await d.t.vigil.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: bearer(d.acct.secret),
      payload: { event: 'auth.login.failure', actor_id: STUFFED_ACTORS[0], ip: '203.0.113.20', password_sha1: BREACHED_SHA1 },
    });
    expect(again.statusCode).toBe(202);
    const open = (await ok('/v1/alerts?type=auth.breached_password&status=open')).data as { id: string }[];
    expect(open).toHaveLength(1);
    expect(group?.alert_ids).not.toContain(open[0]?.id);
  });

  it('by ids: changes the account’s own, lists the rest as not found; another account’s ids are not found', async () => {
    const danas = ((await ok('/v1/alerts?actor_id=dana')).data as { id: string }[]).map((a) => a.id);
    const theirs = await bulk({ ids: danas, status: 'acknowledged' }, d.other.secret);
    expect(theirs.json()).toEqual({ updated: 0, unchanged: 0, not_found: danas });
    const res = await bulk({ ids: [...danas, 'alr_00000000000000000000000000'], status: 'acknowledged' });
    expect(res.json()).toEqual({ updated: danas.length, unchanged: 0, not_found: ['alr_00000000000000000000000000'] });
    expect(((await ok('/v1/alerts?actor_id=dana')).data as { status: string }[]).map((a) => a.status)).toEqual(danas.map(() => 'acknowledged'));
  });

  it('refuses a body that names both or neither of ids and group, no change, more than 1,000 ids, a bad key or a stranger as assignee', async () => {
    expectError(await bulk({ ids: ['alr_x'], group: 'source|x|1.2.3.4', status: 'resolved' }), 400, 'INVALID_REQUEST');
    expectError(await bulk({ status: 'resolved' }), 400, 'INVALID_REQUEST');
    expectError(await bulk({ ids: ['alr_x'] }), 400, 'INVALID_REQUEST');
    expectError(await bulk({ ids: Array.from({ length: 1001 }, (_, i) => `alr_${i}`), status: 'resolved' }), 400, 'INVALID_REQUEST');
    expectError(await bulk({ group: 'not a key', status: 'resolved' }), 400, 'INVALID_REQUEST');
    const stranger = expectError(await bulk({ ids: ['alr_x'], assignee: 'usr_nobody' }), 400, 'INVALID_REQUEST');
    expect(stranger.details?.[0]?.field).toBe('assignee');
    expectError(await getJson(d.t, d.acct.secret, '/v1/alerts/groups?cursor=abc'), 400, 'INVALID_REQUEST');
  });
});
