/**
 * One account runs each attack of test/helpers/noisy-neighbour.ts in a loop while another sends
 * single events one at a time. The victim's p99 under each attack stays within 3× its p99 next
 * to a neighbour sending ordinary events in the same loops: whatever the attacker sends, it costs
 * the others no more than an ordinary customer's traffic does. (The same attacks measured
 * against the built service on a real port: bench/noisy-neighbour.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { ATTACKS, ORDINARY, percentile, victimLatencies, whileAttacking, type Environment, type Send } from '../helpers/noisy-neighbour.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { roomyApp } from './support.js';

const SAMPLES = 200;
const LOOPS = 2;
const ORIGIN = 'https://attacker.example';

describe('a noisy neighbour', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let env: Environment;
  let victim: string;
  let ordinaryP99 = 0;

  beforeAll(async () => {
    t = await roomyApp({ VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_WEBHOOK_POLL_MS: '20' });
    receiver = await new WebhookReceiver().start();
    const attacker = await t.account('business', [ORIGIN]);
    victim = (await t.account('pro')).secret;
    const send: Send = async (r) => {
      const res = await t.vigil.app.inject({
        method: r.method,
        url: r.url,
        headers: r.headers ?? {},
        ...(r.body === undefined ? {} : { payload: typeof r.body === 'string' ? r.body : JSON.stringify(r.body) }),
        ...(r.remoteAddress === undefined ? {} : { remoteAddress: r.remoteAddress }),
      });
      return { status: res.statusCode, body: res.body };
    };
    env = { send, attacker: { secret: attacker.secret, publishable: attacker.publishable, origin: ORIGIN }, adminToken: ADMIN_TOKEN, webhookUrl: receiver.url };
    // Warm every path once, then measure the baseline.
    await victimLatencies(send, victim, 50);
    ordinaryP99 = percentile(await whileAttacking(env, ORDINARY, LOOPS, () => victimLatencies(send, victim, SAMPLES)), 99);
  }, 120_000);
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  for (const attack of ATTACKS) {
    it(`keeps the victim's p99 within 3× while the neighbour sends ${attack.name}`, { timeout: 120_000 }, async () => {
      await attack.setup?.(env);
      const latencies = await whileAttacking(env, attack, LOOPS, () => victimLatencies(env.send, victim, SAMPLES));
      const p99 = percentile(latencies, 99);
      expect(p99, `victim p99 ${p99.toFixed(1)} ms under attack, ${ordinaryP99.toFixed(1)} ms next to ordinary traffic`).toBeLessThanOrEqual(3 * ordinaryP99);
    });
  }
});
