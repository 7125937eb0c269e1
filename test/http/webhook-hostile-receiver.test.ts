/**
 * A receiver that answers with bytes no text column should hold, and a database that will not
 * record an attempt: the delivery's bookkeeping survives both, in both modes (SQLite in the
 * embedded project, PostgreSQL in the scale-out one). The dispatcher's poller is stopped and
 * its passes are run by hand under the manual clock, so every pass is one observable step.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreRejectedError, StoreUnavailableError } from '../../src/storage/store.js';
import { backoffMs, JITTER, MAX_ERROR_CHARS, RETRY_WINDOW_MS, type WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { postEvent, roomyApp } from './support.js';

const ENV = { VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_WEBHOOK_TIMEOUT_MS: '3000' };
/** The dispatcher's lease with the timeout above: 2 × timeout + 5 s. */
const LEASE_MS = 11_000;

/** A body with U+0000, other C0 controls, DEL, CR, a tab and a newline. */
const HOSTILE = 'bad\u0000news\u0001\u001b[31m\u007f\r\n\tend';
const SANITISED = 'bad\ufffdnews\ufffd\ufffd[31m\ufffd\ufffd\n\tend';

type Json = any;

describe('webhooks: a hostile receiver and an unrecordable attempt', () => {
  let t: TestApp;
  let key: string;
  let receiver: WebhookReceiver;
  let hook: Json;
  let dispatcher: WebhookDispatcher;

  const call = (method: 'GET' | 'POST', url: string, payload?: object): Promise<LightMyRequestResponse> =>
    t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload }) });
  const deliveries = async (): Promise<Json[]> => {
    const res = await call('GET', `/v1/webhooks/${hook.id}/deliveries?limit=500`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  const only = async (): Promise<Json> => {
    const list = await deliveries();
    expect(list).toHaveLength(1);
    return list[0];
  };
  const openAlert = async (actor: string) => {
    const res = await postEvent(t, key, { event: 'auth.mfa.disabled', actor_id: actor, ip: '198.51.100.7', timestamp: t.clock.now() });
    expect(res.statusCode, res.body).toBe(202);
  };

  beforeEach(async () => {
    t = await roomyApp(ENV);
    dispatcher = t.services.webhookDispatcher as WebhookDispatcher;
    await dispatcher.stop();
    key = (await t.account('pro')).secret;
    receiver = await new WebhookReceiver().start();
    const created = await call('POST', '/v1/webhooks', { url: receiver.url });
    expect(created.statusCode, created.body).toBe(201);
    hook = created.json();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await t.close();
    await receiver.stop();
  });

  it('POST /test to a receiver answering with NUL bytes: 200 with the delivery, its excerpt sanitised', async () => {
    receiver.respond = () => ({ status: 500, body: HOSTILE });
    const res = await call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(res.statusCode, res.body).toBe(200);
    const expected = {
      event: 'webhook.test',
      status: 'failed',
      attempts: 1,
      next_attempt_at: null,
      last_answer: { status: 500, error: `HTTP 500: ${SANITISED}` },
    };
    expect(res.json()).toMatchObject(expected);
    expect(await only()).toMatchObject(expected);
    // Tried once: no later pass sends it again.
    t.clock.advance(RETRY_WINDOW_MS);
    expect(await dispatcher.runOnce()).toBe(0);
    expect(receiver.received).toHaveLength(1);

    receiver.respond = () => ({ status: 200, body: HOSTILE });
    const ok = await call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'delivered', last_answer: { status: 200, error: null } });
  });

  it('a long answer is cut to its excerpt, and a cut never leaves half of a surrogate pair', async () => {
    receiver.respond = () => ({ status: 400, body: `${'x'.repeat(199)}😀${'\u0000'.repeat(300)}` });
    const res = await call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(res.statusCode, res.body).toBe(200);
    const error = res.json().last_answer.error as string;
    expect(error).toBe(`HTTP 400: ${'x'.repeat(199)}`);
    expect(error.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
  });

  it('an alert delivery to that receiver is retried on the back-off, then failed after 24 hours, and the endpoint disabled with a clean reason', async () => {
    receiver.respond = () => ({ status: 503, body: HOSTILE });
    await openAlert('mallory');
    const start = t.clock.now();
    let attempts = 0;
    for (;;) {
      expect(await dispatcher.runOnce()).toBe(1);
      attempts++;
      const d = await only();
      expect(d).toMatchObject({ attempts, last_answer: { status: 503, error: `HTTP 503: ${SANITISED}` } });
      expect(receiver.received).toHaveLength(attempts);
      if (d.status !== 'pending') break;
      const next = Date.parse(d.next_attempt_at);
      const wait = next - Date.parse(d.last_attempt_at);
      if (next < start + RETRY_WINDOW_MS) {
        expect(wait).toBeGreaterThanOrEqual(Math.floor(backoffMs(attempts) * (1 - JITTER)));
        expect(wait).toBeLessThanOrEqual(Math.ceil(backoffMs(attempts) * (1 + JITTER)));
      }
      // Not due a millisecond early, nor when the lease would have run out.
      t.clock.set(Math.min(next - 1, t.clock.now() + LEASE_MS + 1));
      expect(await dispatcher.runOnce()).toBe(0);
      t.clock.set(next);
    }
    const last = await only();
    expect(last).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(Date.parse(last.last_attempt_at)).toBe(start + RETRY_WINDOW_MS);
    expect(attempts).toBeLessThan(40);
    t.clock.advance(RETRY_WINDOW_MS);
    expect(await dispatcher.runOnce()).toBe(0);
    expect(receiver.received).toHaveLength(attempts);
    const endpoint = (await call('GET', `/v1/webhooks/${hook.id}`)).json();
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabled_reason).toContain(`HTTP 503: ${SANITISED}`);
  });

  it('an attempt the database will not record is not sent again when its lease runs out: it waits its back-off, counts, and stops after 24 hours', async () => {
    receiver.respond = () => ({ status: 503, body: 'busy' });
    vi.spyOn(t.services.store.webhooks, 'finishAttempt').mockRejectedValue(new StoreUnavailableError('finishAttempt failed: the database is gone'));
    await openAlert('trudy');
    const start = t.clock.now();
    let sends = 0;
    for (;;) {
      const claimed = await dispatcher.runOnce();
      if (claimed === 0) break;
      sends++;
      expect(receiver.received).toHaveLength(sends);
      const d = await only();
      // The attempts before this one count although none of their outcomes was recorded.
      expect(d.attempts).toBe(sends - 1);
      if (sends > 1) expect(d.last_answer).toEqual({ status: null, error: 'no outcome was recorded for the last attempt' });
      if (d.status !== 'pending') break;
      const next = Date.parse(d.next_attempt_at);
      expect(next).toBeLessThanOrEqual(start + RETRY_WINDOW_MS);
      if (next < start + RETRY_WINDOW_MS) expect(next - t.clock.now()).toBeGreaterThanOrEqual(Math.floor(backoffMs(sends) * (1 - JITTER)));
      // The lease runs out well before the back-off: nothing is sent then.
      t.clock.advance(LEASE_MS + 1);
      if (t.clock.now() < next) expect(await dispatcher.runOnce()).toBe(0);
      t.clock.set(Math.max(next, t.clock.now()));
    }
    const last = await only();
    expect(last.status).toBe('failed');
    expect(sends).toBeLessThan(40);
    t.clock.advance(RETRY_WINDOW_MS);
    expect(await dispatcher.runOnce()).toBe(0);
    expect(receiver.received).toHaveLength(sends);
  });

  it('an outcome the database refuses for its content is recorded without its description, and the schedule moves on', async () => {
    receiver.respond = () => ({ status: 503, body: 'busy' });
    const store = t.services.store.webhooks;
    const finish = store.finishAttempt.bind(store);
    let refused = 0;
    vi.spyOn(store, 'finishAttempt').mockImplementation(async (delivery, owner, outcome, counts) => {
      if (outcome.lastError?.startsWith('HTTP 503')) {
        refused++;
        throw new StoreRejectedError('finishAttempt failed: invalid byte sequence');
      }
      return finish(delivery, owner, outcome, counts);
    });
    await openAlert('oscar');
    expect(await dispatcher.runOnce()).toBe(1);
    expect(refused).toBe(1);
    const d = await only();
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_answer: { status: 503, error: 'the attempt failed; its description could not be stored' } });
    expect(Date.parse(d.next_attempt_at) - Date.parse(d.last_attempt_at)).toBeGreaterThanOrEqual(Math.floor(backoffMs(1) * (1 - JITTER)));
    t.clock.advance(LEASE_MS + 1);
    expect(await dispatcher.runOnce()).toBe(0);
    expect(receiver.received).toHaveLength(1);
  });
});
