import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { testApp } from '../helpers/app.js';

const dataDir = mkdtempSync(join(tmpdir(), 'vigil-members-cli-'));
const saved = { ...process.env };

async function cli(...argv: string[]): Promise<string[]> {
  const out: string[] = [];
  expect(await runCli(argv, (line) => out.push(line))).toBe(0);
  return out;
}

/** Sends one request to the app on the CLI's data directory. */
async function post(url: string, payload: object): Promise<number> {
  const t = await testApp({ VIGIL_DATA_DIR: dataDir });
  try {
    return (await t.vigil.app.inject({ method: 'POST', url, payload })).statusCode;
  } finally {
    await t.close();
  }
}

describe('vigil members invite and reset-link', () => {
  beforeAll(() => {
    for (const k of Object.keys(process.env)) if (k.startsWith('VIGIL_')) delete process.env[k];
    process.env.VIGIL_DATA_DIR = dataDir;
  });
  afterAll(() => {
    process.env = saved;
  });

  it('prints an invitation link the person joins with, then a reset link that sets their password', async () => {
    const accountId = /(acc_\w+)/.exec((await cli('accounts', 'create', '--plan', 'pro'))[0] as string)?.[1] as string;
    const invited = await cli('members', 'invite', '--account', accountId, '--email', 'ops@example.com', '--role', 'admin');
    expect(invited[0]).toMatch(/^invitation for ops@example.com as admin, valid until \d{4}-/);
    expect(invited[1]).toMatch(/^\/dashboard#\/accept\/[\w-]{40,}$/);
    expect(invited[2]).toMatch(/VIGIL_PUBLIC_URL is unset/);
    const token = (invited[1] as string).split('/').pop() as string;
    expect(await post(`/dashboard/api/invitations/${token}/accept`, { password: 'operations all night long' })).toBe(201);

    process.env.VIGIL_PUBLIC_URL = 'https://vigil.example.com';
    const reset = await cli('members', 'reset-link', '--email', 'ops@example.com');
    expect(reset).toEqual([expect.stringMatching(/^https:\/\/vigil\.example\.com\/dashboard#\/reset\/[\w-]{40,}$/)]);
    expect(await post(`/dashboard/api/password-reset/${(reset[0] as string).split('/').pop() ?? ''}`, { password: 'a new night of operations' })).toBe(204);
    await expect(runCli(['members', 'reset-link', '--email', 'nobody@example.com'], () => undefined)).rejects.toThrow(/No person has the email/);
  });
});
