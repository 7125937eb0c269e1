/**
 * One account attacks the service while another sends ordinary single events: the attacks an
 * account holding its own keys can run (each once stalled or crashed the service for everyone),
 * written once against a transport, so the functional test drives them through Fastify's inject
 * and bench/noisy-neighbour.ts through a real port.
 */

export interface Request {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly url: string;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON; a string as it is (with its own content-type header). */
  readonly body?: unknown;
  /** The connecting address, where the transport can set it. */
  readonly remoteAddress?: string;
}

export interface Answer {
  readonly status: number;
  readonly body: string;
}

export type Send = (request: Request) => Promise<Answer>;

export interface Keys {
  readonly secret: string;
  readonly publishable: string;
  /** An origin the publishable key is allowed from. */
  readonly origin: string;
}

export interface Environment {
  readonly send: Send;
  readonly attacker: Keys;
  readonly adminToken: string;
  /** A URL the service may deliver webhooks to. */
  readonly webhookUrl: string;
}

export interface Attack {
  readonly name: string;
  /**
   * The ordinary traffic the attack is compared with: `events`, single small events; `batches`,
   * valid batches of the same size (a megabyte of events costs its parsing and storage whoever
   * sends it, so an attack made of such batches is measured against ordinary ones).
   */
  readonly baseline: 'events' | 'batches';
  /** What the attacker sets up once (models, webhooks, stored events). */
  setup?(env: Environment): Promise<void>;
  /** One round of the attack; every answer must be an expected one (checked by `expectStatus`). */
  once(env: Environment, round: number): Promise<void>;
}

const json = (headers: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...headers });
const auth = (key: string, headers: Record<string, string> = {}) => json({ authorization: `Bearer ${key}`, ...headers });

/**
 * The answer's status must be one of `allowed`. The neighbour's own requests may also be shed
 * with 503 OVERLOADED when its flood outruns an instance that the test run leaves little CPU:
 * shedding the excess is the instance's job. The victim's requests are checked with `strict`.
 */
async function expectStatus(answer: Promise<Answer>, allowed: readonly number[], what: string, strict = false): Promise<Answer> {
  const a = await answer;
  if (!strict && a.status === 503 && a.body.includes('"OVERLOADED"')) return a;
  if (!allowed.includes(a.status)) throw new Error(`${what}: answered ${a.status}, expected ${allowed.join(' or ')}: ${a.body.slice(0, 300)}`);
  return a;
}

/**
 * Regular expressions at the per-pattern instruction limit (two fill a model's), and the longest
 * text each may still run on within the per-test work budget: the most evaluation work an event
 * can ask for.
 */
const HEAVY_REGEXES = ['(?s)a.{0,998}[0-9]', '(?s)a.{0,998}[a-f]'];
const HEAVY_TEXT = 'a'.repeat(120);
/** Fills an event to about 9 KB, so that a batch of 100 is close to the 1 MiB limit. */
const PADDING = 'p'.repeat(9_000);

const heavyModel = (i: number, event = 'custom.*') => ({
  name: `heavy ${i}`,
  match: { event: [event], where: { any: HEAVY_REGEXES.map((value) => ({ field: 'metadata.x', op: 'regex', value })) } },
  outcome: { alert: `custom.heavy_${i}`, severity: 'low' },
});

/** A batch of 100 events of about 9 KB each, as any customer may send. */
const bigBatch = (round: number, type: string) => ({
  events: Array.from({ length: 100 }, (_, i) => ({ event: type, actor_id: `b${(round * 100 + i) % 500}`, metadata: { x: HEAVY_TEXT, pad: PADDING } })),
});

const sigmaRule = (target: string) =>
  ['title: Probe', 'detection:', '  sel_a: {cs-method: GET}', '  sel_b: {cs-method: HEAD}', `  condition: 1 of ${target}`].join('\n');

export const ATTACKS: readonly Attack[] = [
  {
    name: 'webhook filter globs that backtrack, matched on every alert',
    baseline: 'events',
    async setup(env) {
      await expectStatus(
        env.send({
          method: 'POST',
          url: '/v1/webhooks',
          headers: auth(env.attacker.secret),
          body: { url: env.webhookUrl, filters: { alert_types: [`${'*'.repeat(60)}Z`, `${'*a'.repeat(45)}Z`] } },
        }),
        [201],
        'webhook',
      );
    },
    async once(env, round) {
      const body = { event: 'auth.login.failure', actor_id: `scan${round % 50}`, ip: '203.0.113.7', user_agent: 'sqlmap/1.7' };
      await expectStatus(env.send({ method: 'POST', url: '/v1/events', headers: auth(env.attacker.secret), body }), [202], 'alerting event');
    },
  },
  {
    name: 'Sigma condition name patterns that backtrack',
    baseline: 'events',
    async once(env) {
      const rule = sigmaRule(`${'*'.repeat(60)}Z`);
      await expectStatus(
        env.send({ method: 'POST', url: '/v1/threat-models/test', headers: auth(env.attacker.secret), body: { model: { format: 'sigma', rule } } }),
        [400, 429],
        'sigma dry run',
      );
      await expectStatus(
        env.send({ method: 'POST', url: '/v1/threat-models', headers: auth(env.attacker.secret, { 'content-type': 'application/yaml' }), body: rule }),
        [400, 429],
        'sigma save',
      );
    },
  },
  {
    name: 'hostile YAML (alias expansion, deep nesting) and deep conditions',
    baseline: 'events',
    async once(env, round) {
      const rules = [
        `title: bomb\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\ndetection:\n  sel: {a: 1}\n  condition: sel`,
        `title: deep\nx: ${'['.repeat(20_000)}${']'.repeat(20_000)}\ndetection:\n  sel: {a: 1}\n  condition: sel`,
        `title: deep\ndetection:\n  sel: {a: 1}\n  condition: ${'('.repeat(5_000)}sel${')'.repeat(5_000)}`,
      ];
      const rule = rules[round % rules.length] as string;
      await expectStatus(
        env.send({ method: 'POST', url: '/v1/threat-models/test', headers: auth(env.attacker.secret), body: { model: { format: 'sigma', rule } } }),
        [400, 429],
        'hostile yaml',
      );
    },
  },
  {
    name: 'threat models at their size limits over batches of events that ask them for the most work',
    baseline: 'batches',
    async setup(env) {
      for (let i = 0; ; i++) {
        const saved = await env.send({ method: 'POST', url: '/v1/threat-models', headers: auth(env.attacker.secret), body: heavyModel(i) });
        // Until the account's compiled-memory limit refuses the next one (at once when a retried
        // run finds the account already full).
        if (saved.status === 400 && saved.body.includes('MiB per account')) break;
        await expectStatus(Promise.resolve(saved), [201], 'heavy model');
      }
    },
    async once(env, round) {
      await expectStatus(
        env.send({ method: 'POST', url: '/v1/events/batch', headers: auth(env.attacker.secret), body: bigBatch(round, 'custom.heavy.event') }),
        [202],
        'heavy batch',
      );
    },
  },
  {
    name: 'dry runs of heavy models over stored events',
    baseline: 'events',
    async setup(env) {
      for (let b = 0; b < 5; b++)
        await expectStatus(
          env.send({ method: 'POST', url: '/v1/events/batch', headers: auth(env.attacker.secret), body: bigBatch(b, 'custom.stored.event') }),
          [202],
          'stored batch',
        );
    },
    async once(env) {
      const model = heavyModel(0, 'custom.stored.*');
      await expectStatus(
        env.send({ method: 'POST', url: '/v1/threat-models/test', headers: auth(env.attacker.secret), body: { model } }),
        [200, 429],
        'dry run',
      );
    },
  },
  {
    name: 'unknown field names of 10,000 characters from a publishable key',
    baseline: 'batches',
    async once(env, round) {
      const events = Array.from({ length: 100 }, (_, i) => ({
        event: 'auth.login.failure',
        actor_id: `u${i}`,
        [`${String.fromCharCode(97 + (round % 26))}${'x'.repeat(10_000)}${i}`]: 1,
      }));
      await expectStatus(
        env.send({ method: 'POST', url: '/v1/events/batch', headers: auth(env.attacker.publishable, { origin: env.attacker.origin }), body: { events } }),
        [400, 413],
        'unknown fields',
      );
    },
  },
  {
    name: 'wrong admin tokens from many addresses',
    baseline: 'events',
    async once(env, round) {
      await expectStatus(
        env.send({
          method: 'GET',
          url: '/admin/accounts',
          headers: { authorization: `Bearer wrong-${round}` },
          remoteAddress: `2001:db8:${(round % 200).toString(16)}::${(round % 7) + 1}`,
        }),
        [401, 403, 429],
        'admin',
      );
    },
  },
  {
    name: 'server and admin events forged with a publishable key',
    baseline: 'events',
    async once(env, round) {
      const event = round % 2 === 0 ? 'server.log.cleared' : 'admin.user.impersonated';
      await expectStatus(
        env.send({
          method: 'POST',
          url: '/v1/events',
          headers: auth(env.attacker.publishable, { origin: env.attacker.origin }),
          body: { event, actor_id: 'root', host: 'web-1', ip: '10.0.0.1' },
        }),
        [403],
        'forged event',
      );
    },
  },
];

/** What an ordinary neighbour sends, in two shapes: the baselines the attacks are compared with. */
export const ORDINARY_BATCHES: Attack = {
  name: 'ordinary batches of the same size from the same account',
  baseline: 'batches',
  async once(env, round) {
    await expectStatus(
      env.send({ method: 'POST', url: '/v1/events/batch', headers: auth(env.attacker.secret), body: bigBatch(round, 'auth.login.success') }),
      [202],
      'ordinary batch',
    );
  },
};

export const ORDINARY: Attack = {
  name: 'ordinary traffic from the same account',
  baseline: 'events',
  async once(env, round) {
    const body = { event: 'auth.login.success', actor_id: `o${round % 200}`, ip: '198.51.100.20' };
    await expectStatus(env.send({ method: 'POST', url: '/v1/events', headers: auth(env.attacker.secret), body }), [202], 'ordinary event');
  },
};

/** The victim's single events, one at a time; answers each request's latency in milliseconds. */
export async function victimLatencies(send: Send, secret: string, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const body = { event: 'auth.login.failure', actor_id: `victim${i % 20}`, ip: '192.0.2.10' };
    const started = performance.now();
    await expectStatus(send({ method: 'POST', url: '/v1/events', headers: auth(secret), body }), [202], 'victim event', true);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** Runs `loops` copies of the attack back to back while `measure` runs, then stops them; an attack's failure fails the run. */
export async function whileAttacking<T>(env: Environment, attack: Attack, loops: number, measure: () => Promise<T>): Promise<T> {
  let stop = false;
  let round = 0;
  const runners = Array.from({ length: loops }, async () => {
    while (!stop) await attack.once(env, round++);
  });
  try {
    return await measure();
  } finally {
    stop = true;
    await Promise.all(runners);
  }
}

export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}
