import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import { ADMIN, api, provision, startService, storedEvents, tempDir, type Service } from './service.js';

/** An erasure job survives its instance: SIGKILL while it runs, and the restarted service finishes it. */
describe('erasure job after a crash', () => {
  const running: Service[] = [];
  afterEach(() => {
    for (const s of running.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  });

  it('SIGKILL while the job runs: the restarted service takes the job over when its lease ends and erases every row', { timeout: 180_000 }, async () => {
    const dir = tempDir('vigil-erase-crash-');
    const env = { VIGIL_SUBJECT_JOB_LEASE_MS: '2000' };
    const first = await startService(dir, env);
    running.push(first);
    const { accountId, key } = await provision(first.base, 'business');
    const subjectsKey = (await api(first.base, 'POST', `/admin/accounts/${accountId}/keys`, ADMIN, { kind: 'secret', scopes: ['subjects'] })).json
      .key as string;
    const ACTOR = 'qqcrashsubjectqq';
    for (let batch = 0; batch < 30; batch++) {
      const events = Array.from({ length: 100 }, (_, i) => ({ event: 'auth.login.failure', actor_id: (batch * 100 + i) % 3 === 0 ? 'someone-else' : ACTOR }));
      expect((await api(first.base, 'POST', '/v1/events/batch', key, { events })).status).toBe(202);
    }
    const submitted = await api(first.base, 'POST', '/v1/subjects/erase', subjectsKey, { identifiers: [{ kind: 'actor_id', value: ACTOR }] });
    expect(submitted.status).toBe(202);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    const second = await startService(dir, env);
    running.push(second);
    let job: { status: string; counts: { events: number } } | undefined;
    await until(
      async () => {
        job = (await api(second.base, 'GET', `/v1/subjects/jobs/${submitted.json.job.id}`, subjectsKey)).json.job;
        return job?.status === 'done';
      },
      'the job is done on the restarted service',
      60_000,
      200,
    );
    const left = await storedEvents(second.base, key);
    // Two events in three were the subject's: only the others are left.
    expect(left.size).toBe(1000);
    const page = await api(second.base, 'GET', `/v1/events?actor_id=${ACTOR}`, key);
    expect(page.json.data).toEqual([]);
    second.child.kill('SIGTERM');
    await second.exited;
  });
});
