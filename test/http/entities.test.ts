import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKFILLED_AT, BLOCKLISTED, DAY, dayApp, dayEvents, type DayApp } from './investigation-day.js';
import { expectError, getJson } from './support.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Entity summaries and the alert list's entity filters over one seeded day. */
describe('entities and alert filters', () => {
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
  const alertsOf = async (query: string, secret = d.acct.secret) =>
    ((await ok(`/v1/alerts?limit=200&${query}`, secret)).data as { type: string; subject: string; actor_id: string | null }[])
      .map((a) => `${a.type} ${a.subject}`)
      .sort();

  it('alerts: actor_id, ip, since and until filter; another account sees none of them', async () => {
    expect(await alertsOf('actor_id=dana')).toEqual([
      'auth.mfa_disabled actor:dana',
      'chain.account_takeover actor:dana',
      'data.bulk_export actor:dana',
      'data.exfiltration_volume actor:dana',
      `network.blocklisted_ip ip:${BLOCKLISTED}`,
    ]);
    expect(await alertsOf(`ip=${BLOCKLISTED}`)).toEqual([`network.blocklisted_ip ip:${BLOCKLISTED}`]);
    // Alerts whose details name the address: the spray on the /24 and the brute force on the host.
    expect(await alertsOf('ip=203.0.113.25')).toEqual(['auth.credential_spray net:203.0.113.0/24']);
    expect(await alertsOf('ip=203.0.113.200')).toEqual(['host.ssh_brute_force host:web1']);
    expect(await alertsOf(`since=${iso(DAY + 10 * HOUR)}&until=${iso(DAY + 11 * HOUR)}`)).toEqual(await alertsOf('actor_id=dana'));
    expect(await alertsOf(`until=${iso(DAY + 9 * HOUR)}`)).toEqual([]);
    expect(await alertsOf('actor_id=stuffed-07')).toEqual(['auth.breached_password actor:stuffed-07']);
    expect(await alertsOf('actor_id=dana', d.other.secret)).toEqual([]);
    expect(await alertsOf(`ip=${BLOCKLISTED}`, d.other.secret)).toEqual([]);
  });

  it('actor: counts, times, risk per hour, where it came from and its alerts', async () => {
    const s = await ok(`/v1/entities/actor/dana?since=${iso(DAY)}&until=${iso(DAY + 12 * HOUR)}`);
    expect(s).toMatchObject({
      kind: 'actor',
      id: 'dana',
      bucket_ms: HOUR,
      first_seen: iso(DAY + 10 * HOUR),
      last_seen: iso(DAY + 10 * HOUR + 20 * 60_000),
      events: 6,
      alerts: 5,
      open_alerts: 5,
      addresses: [{ value: BLOCKLISTED, count: 6 }],
      devices: [{ value: 'dana-laptop', count: 6 }],
      sessions: [{ value: 'sess-dana', count: 6 }],
      countries: [{ value: 'RU', count: 6 }],
      hosts: [],
      partial: false,
    });
    expect(s).not.toHaveProperty('actors');
    expect(s).not.toHaveProperty('network');
    expect(s.max_risk).toBeGreaterThanOrEqual(70);
    expect(s.risk_over_time).toEqual([{ at: iso(DAY + 10 * HOUR), max: s.max_risk, avg: expect.any(Number), count: 6 }]);
    expect(s.alerts_recent.map((a: { type: string }) => a.type)).toContain('chain.account_takeover');
    // The default window is the last 30 days, in 12-hour buckets.
    const wide = await ok('/v1/entities/actor/dana');
    expect(wide).toMatchObject({ events: 6, bucket_ms: 12 * HOUR, until: iso(DAY + 12 * HOUR), since: iso(DAY + 12 * HOUR - 30 * 24 * HOUR) });
  });

  it('ip: the actors behind it and its network now: ASN, country, /24, the feeds it is on', async () => {
    const s = await ok(`/v1/entities/ip/${BLOCKLISTED}`);
    expect(s).toMatchObject({ kind: 'ip', events: 6, actors: [{ value: 'dana', count: 6 }], alerts: 1, open_alerts: 1 });
    expect(s).not.toHaveProperty('addresses');
    expect(s.network).toMatchObject({ asn: 57523, country: 'RU', network: '91.240.118.0/24', feeds: ['blocklist-example'], source: 'lookup' });
    const stuffing = await ok('/v1/entities/ip/203.0.113.25');
    expect(stuffing).toMatchObject({ events: 5, alerts: 1, user_agents: [{ value: 'python-requests/2.31.0', count: 5 }] });
    expect(stuffing.actors).toHaveLength(5);
    expect(stuffing.network).toMatchObject({ network: '203.0.113.0/24', feeds: [], kind: 'documentation' });
    expectError(await getJson(d.t, d.acct.secret, '/v1/entities/ip/not-an-address'), 400, 'INVALID_REQUEST');
  });

  it('host: the events naming it, who logged in from where, its alerts', async () => {
    const s = await ok('/v1/entities/host/web1');
    expect(s).toMatchObject({
      kind: 'host',
      events: 13,
      actors: [
        { value: 'root', count: 12 },
        { value: 'deploy', count: 1 },
      ],
      addresses: [
        { value: '203.0.113.200', count: 12 },
        { value: '10.0.0.6', count: 1 },
      ],
      alerts: 1,
    });
    expect(s.alerts_recent[0]).toMatchObject({ type: 'host.ssh_brute_force', subject: 'host:web1' });
  });

  it('an entity with nothing stored, or another account’s, answers zeros', async () => {
    const zeros = {
      first_seen: null,
      last_seen: null,
      events: 0,
      alerts: 0,
      open_alerts: 0,
      max_risk: 0,
      risk_over_time: [],
      alerts_recent: [],
      countries: [],
    };
    expect(await ok('/v1/entities/actor/nobody')).toMatchObject({ kind: 'actor', id: 'nobody', ...zeros });
    expect(await ok('/v1/entities/actor/dana', d.other.secret)).toMatchObject(zeros);
    expect(await ok('/v1/entities/host/web1', d.other.secret)).toMatchObject(zeros);
    const ip = await ok(`/v1/entities/ip/${BLOCKLISTED}`, d.other.secret);
    expect(ip).toMatchObject(zeros);
    // What the feeds say of the address now is no account's data.
    expect(ip.network).toMatchObject({ feeds: ['blocklist-example'] });
  });

  it('overview: events and alerts by event time; the riskiest actors and addresses first; kill chains with the events of each stage', async () => {
    const o = await ok('/dashboard/api/overview?range=24h');
    const events = o.events as { at: number; count: number }[];
    const sent = dayEvents();
    expect(events.reduce((n, p) => n + p.count, 0)).toBe(sent.length);
    // Far below the bound on events read: every event of the range is counted, and the answer says so.
    expect(o.events_capped).toBe(false);
    // Everything arrived at noon; the backfilled login counts in its own hour, with the others that happened then.
    expect(events.find((p) => p.at === DAY + 12 * HOUR)).toBeUndefined();
    const hourOf = (ms: number) => ms - (ms % HOUR);
    const inBackfillHour = sent.filter((e) => hourOf(Date.parse(String(e.timestamp))) === hourOf(BACKFILLED_AT)).length;
    expect(events.find((p) => p.at === hourOf(BACKFILLED_AT))).toEqual({ at: hourOf(BACKFILLED_AT), count: inBackfillHour });
    expect((o.alerts as { at: number }[]).map((p) => p.at)).toEqual([DAY + 9 * HOUR, DAY + 10 * HOUR, DAY + 11 * HOUR]);

    const actors = (o.top_actors as { actor_id: string; alerts: number; max_risk: number; count: number }[]).map((a) => a.actor_id);
    expect(o.top_actors[0]).toMatchObject({ actor_id: 'dana', count: 6, alerts: 5 });
    // 400 harmless requests rank below six risky events, if at all.
    expect(actors.indexOf('svc-backup') === -1 || actors.indexOf('svc-backup') > actors.indexOf('dana')).toBe(true);
    expect(o.top_ips[0]).toMatchObject({ ip: BLOCKLISTED, count: 6, alerts: 1 });
    const ips = (o.top_ips as { ip: string }[]).map((a) => a.ip);
    expect(ips.indexOf('10.0.0.5') === -1 || ips.indexOf('10.0.0.5') > 0).toBe(true);

    const chain = (o.chains_in_progress as { type: string; stage_events: { stage: string; event_ids: string[] }[] }[]).find(
      (c) => c.type === 'chain.account_takeover',
    );
    expect(chain?.stage_events.map((s) => s.stage)).toEqual(['credential_attack_or_risky_login', 'login_success', 'sensitive_change']);
    const last = chain?.stage_events[2]?.event_ids ?? [];
    expect(last).toHaveLength(1);
    expect((await ok(`/v1/events/${last[0]}`)).event).toBe('auth.mfa.disabled');

    const theirs = await ok('/dashboard/api/overview?range=24h', d.other.secret);
    expect(theirs).toMatchObject({ events: [], alerts: [], top_actors: [], top_ips: [], chains_in_progress: [] });
  });

  it('a window that ends before it starts is a 400', async () => {
    const body = expectError(await getJson(d.t, d.acct.secret, `/v1/entities/actor/dana?since=${iso(DAY)}&until=${iso(DAY - HOUR)}`), 400, 'INVALID_REQUEST');
    expect(body.details?.[0]?.field).toBe('since');
  });
});
