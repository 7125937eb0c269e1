import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provision, startService, tempDir, type Service } from '../../test/process/service.js';
import { compare, listEvents, startAgent, until, writeAgentConfig, writeLines, type AgentProcess } from './harness.js';

/**
 * No loss through rate limiting: a Free key (30 events per minute, no batch endpoint) and a
 * paid key on a tiny plan (30 per minute, batches of at most 5) each receive 45 lines,
 * more than a minute's worth; every line arrives exactly once after the 429s.
 */
describe('agent delivery through 429s', () => {
  let service: Service;
  const agents: AgentProcess[] = [];
  const dir = tempDir('vigil-agent-429-');

  beforeAll(async () => {
    const plans = join(dir, 'tiny-plans.json');
    writeFileSync(plans, JSON.stringify({ plans: { tiny: { rpm: 30, eps: 5, batch_max: 5, monthly_cap: 100_000, overage: 'bill' } } }));
    service = await startService(dir, { VIGIL_PLANS_FILE: plans });
  });

  afterAll(async () => {
    for (const a of agents) a.child.kill('SIGKILL');
    service?.child.kill('SIGTERM');
    await service?.exited;
  });

  it.concurrent.each([
    ['free', 45],
    ['tiny', 45],
  ])('a %s key: %i lines written, each stored exactly once', async (plan, lines) => {
    const { key } = await provision(service.base, plan);
    const agentDir = tempDir(`vigil-agent-${plan}-`);
    const log = join(agentDir, 'auth.log');
    writeFileSync(log, '');
    const agent = startAgent(writeAgentConfig(agentDir, service.base, key, log));
    agents.push(agent);
    await until('the agent to follow the log', 10_000, async () => (agent.stderr.some((l) => l.includes('vigil-agent running')) ? true : undefined));
    writeLines(log, 0, lines);
    const stored = await until(
      'every line to be stored',
      140_000,
      async () => {
        const events = await listEvents(service.base, key);
        return events.length >= lines ? events : undefined;
      },
      1_000,
    );
    const result = compare(lines, stored);
    console.log(`[no-loss ${plan}] ${JSON.stringify({ ...result, missing: result.missing.length })}`);
    expect(result.missing).toEqual([]);
    expect(result.wrongContent).toBe(0);
    expect(result.stored).toBe(lines);
    expect(result.distinctEventIds).toBe(lines);
    // The limit was really hit: the agent logged 429s and waited.
    expect(agent.stderr.some((l) => l.includes('rate limited (429)'))).toBe(true);
    if (plan === 'free') expect(agent.stderr.some((l) => l.includes('no batch endpoint'))).toBe(true);
    else expect(agent.stderr.some((l) => l.includes('smaller batches'))).toBe(true);
  });
});
