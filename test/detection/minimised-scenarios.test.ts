/**
 * The detector scenarios (test/fixtures/detectors) played again with each privacy setting
 * applied to every event between enrichment and detection, as the minimise stage does, in both
 * state modes. Every scenario still raises exactly what it expects, except the ones
 * docs/guides/privacy.md lists for that setting, whose difference is asserted here as it is
 * documented there; and no detection state key or value holds an identifier as sent.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import type { StateStore } from '../../src/detection/state/state-store.js';
import { createDetectStage } from '../../src/pipeline/detect.js';
import { minimiseEvent } from '../../src/privacy/minimise.js';
import { validatePrivacySettings, type CompiledPrivacy } from '../../src/privacy/minimise-settings.js';
import { accountSecret } from '../../src/privacy/pseudonym.js';
import { RedisStateStore } from '../../src/redis/state-store.js';
import type { AlertWrite } from '../../src/storage/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { formatAddress, parseAddress, truncatedAddress } from '../../src/util/ip.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { expand, loadScenarios, type Scenario } from './fixtures.js';
import { accountContext, enriched } from './helpers.js';

const truncatedText = (ip: string): string | undefined => {
  const a = parseAddress(ip);
  return a === undefined ? undefined : formatAddress(truncatedAddress(a));
};

const MASTER = 'test-pseudonym-master-secret-0123456789';

const SETTINGS = {
  'ip truncate': { ip: 'truncate' },
  'ip pseudonym': { ip: 'pseudonym' },
  'identifiers pseudonymised, user agent dropped, metadata scrubbed': {
    actor_id: 'pseudonym',
    email: 'pseudonym',
    device_id: 'pseudonym',
    user_agent: 'drop',
    scrub: { builtin: true },
  },
  everything: { ip: 'pseudonym', actor_id: 'pseudonym', email: 'pseudonym', device_id: 'pseudonym', user_agent: 'drop', scrub: { builtin: true } },
} as const;
type SettingName = keyof typeof SETTINGS;

/**
 * Scenarios whose alerts change under a setting, and how: the list docs/guides/privacy.md gives
 * ("What each setting costs in detection"). Every other scenario is unchanged.
 */
export const CHANGED: Readonly<Record<SettingName, Readonly<Record<string, { readonly opened: readonly string[]; readonly why: string }>>>> = {
  'ip truncate': {
    'api_abuse/enumeration-quiet': { opened: ['api.enumeration'], why: 'two addresses of one /24 count as one: their paths add up to an enumeration' },
    'credential_spray/subnet-spray': {
      opened: ['auth.brute_force.ip', 'auth.credential_spray'],
      why: 'five addresses of one /24 are one address: the spray is still found, and its failures also add up to a brute force by address',
    },
    'distributed_attack/distributed-10-ips': { opened: [], why: 'ten addresses of one /24 are one address: no longer distributed' },
    'distributed_attack/typos-from-many-ips-quiet': {
      opened: ['auth.brute_force.ip', 'auth.credential_stuffing_success'],
      why: 'sixty home connections in one /24 are one address: their single typos add up to a brute force by address, and the logins that follow look like stuffing',
    },
  },
  'ip pseudonym': {},
  'identifiers pseudonymised, user agent dropped, metadata scrubbed': {},
  everything: {},
};

const scenarios = loadScenarios();

function compiled(name: SettingName): CompiledPrivacy {
  const result = validatePrivacySettings(SETTINGS[name], true);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.compiled;
}

/** Identifiers the scenario sends (actors, emails, addresses, device ids) that the setting replaces. */
function rawIdentifiers(scenario: Scenario, setting: SettingName): string[] {
  const s = SETTINGS[setting] as Record<string, unknown>;
  const out = new Set<string>();
  const specs = expand(scenario);
  for (const spec of specs) {
    // An address that is its own /24 or /48 (198.51.100.0) is the network every truncated address of it names.
    if (s.ip !== undefined && spec.ip !== undefined && truncatedText(spec.ip) !== spec.ip) out.add(spec.ip);
    if (s.actor_id !== undefined && spec.actor !== undefined) out.add(spec.actor);
    if (s.email !== undefined && spec.email !== undefined) out.add(spec.email.toLowerCase());
  }
  // Metadata is the sender's (a port scan's source_ip): only scrub rules touch it, so a value it repeats is not checked.
  const metadata = JSON.stringify(specs.map((spec) => spec.metadata ?? {}));
  // Short values ("a", "u1") would match unrelated text.
  return [...out].filter((v) => v.length >= 4 && !metadata.includes(v));
}

async function play(scenario: Scenario, state: StateStore, setting: SettingName, accountId: string): Promise<string[]> {
  const detect = createDetectStage({ state, clock: new ManualClock() });
  const ctx = accountContext(scenario.settings ?? {}, accountId);
  const privacy = compiled(setting);
  const secret = accountSecret(MASTER, accountId);
  const writes: AlertWrite[] = [];
  const specs = expand(scenario);
  const step = state.runSync ? 1 : 8;
  for (let from = 0; from < specs.length; from += step) {
    const events = specs.slice(from, from + step).map((spec) => {
      const event = enriched(spec);
      minimiseEvent(event, privacy, secret);
      return event;
    });
    const results = await detect.many(
      events.map((event, i) => ({ event, eventId: `evt_${from + i}` })),
      ctx,
    );
    for (const r of results) writes.push(...r.writes);
  }
  for (const w of writes) {
    const text = JSON.stringify(w.alert);
    for (const raw of rawIdentifiers(scenario, setting)) expect(text, `alert ${w.alert.type} holds ${raw}`).not.toContain(raw);
  }
  return [...new Set(writes.filter((w) => w.opened).map((w) => w.alert.type))].sort();
}

function outcome(name: string, scenario: Scenario, opened: string[], setting: SettingName): void {
  const expected = [...new Set(scenario.expect.alerts)].sort();
  const changed = CHANGED[setting][name];
  if (changed === undefined) expect(opened, `${name} under ${setting}`).toEqual(expected);
  else {
    expect(opened, `${name} under ${setting}: ${changed.why}`).toEqual(changed.opened);
    expect(opened).not.toEqual(expected);
  }
}

const cases = (Object.keys(SETTINGS) as SettingName[]).flatMap((setting) => scenarios.map(({ name, scenario }) => ({ setting, name, scenario })));

describe('detector scenarios on minimised events (in-process state)', () => {
  const states: MemoryStateStore[] = [];
  afterAll(async () => {
    for (const s of states) await s.close();
  });

  it.each(cases)('$setting: $name', async ({ setting, name, scenario }) => {
    const state = new MemoryStateStore({ sweepIntervalMs: 0 });
    states.push(state);
    outcome(name, scenario, await play(scenario, state, setting, `acc_${Math.random().toString(36).slice(2, 10)}`), setting);
  });
});

const redis = await connectTestRedis('minimised-scenarios');

describeWithRedis('detector scenarios on minimised events (Redis state): no key or value holds an identifier as sent', redis, (r) => {
  it.each(cases)('$setting: $name', async ({ setting, name, scenario }) => {
    const prefix = `${r.prefix}${setting.replace(/\W+/g, '-')}:${name}:`;
    const state = new RedisStateStore(r.client, { prefix });
    outcome(name, scenario, await play(scenario, state, setting, `acc_${Math.random().toString(36).slice(2, 10)}`), setting);
    const raws = rawIdentifiers(scenario, setting);
    if (raws.length === 0) return;
    const keys = await r.client.keys(`${prefix}*`);
    for (const key of keys) {
      const type = await r.client.type(key);
      const value =
        type === 'hash'
          ? JSON.stringify(await r.client.hgetall(key))
          : type === 'zset'
            ? JSON.stringify(await r.client.zrange(key, 0, -1, 'WITHSCORES'))
            : type === 'set'
              ? JSON.stringify(await r.client.smembers(key))
              : type === 'list'
                ? JSON.stringify(await r.client.lrange(key, 0, -1))
                : type === 'string'
                  ? String(await r.client.get(key))
                  : '';
      for (const raw of raws) expect(`${key} ${value}`, `Redis key ${key} holds ${raw}`).not.toContain(raw);
    }
  });
});
