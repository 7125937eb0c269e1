import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { expectError, roomyApp } from './support.js';

/**
 * A threat model's CIDR condition reads addresses as allowlists and limits do: text that some
 * parsers take for an address (`010.0.0.1` as octal 8.0.0.1, `10.1` as 10.0.0.1, hexadecimal
 * `0x0a.0.0.1`) is no address anywhere in the service.
 */
const LEGACY_FORMS = ['010.0.0.1', '10.1', '0x0a.0.0.1'];

describe('addresses in threat models and allowlists', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await roomyApp();
    key = (await t.account('pro')).secret;
  });
  afterAll(() => t.close());

  const call = (method: 'POST' | 'PATCH', url: string, payload: unknown) =>
    t.vigil.app.inject({ method, url, headers: bearer(key), payload: payload as object });
  const model = (value: unknown, alert = 'custom.cidr_probe') => ({
    name: alert,
    match: { event: 'custom.probe', where: { field: 'metadata.client_ip', op: 'cidr', value } },
    outcome: { alert, severity: 'low' },
  });

  it('refuses a CIDR in a legacy address form with a 400 naming the value, as an allowlist entry is refused', async () => {
    for (const form of LEGACY_FORMS) {
      const cidr = `${form}/8`;
      const refused = expectError(await call('POST', '/v1/threat-models', model([cidr])), 400, 'INVALID_THREAT_MODEL');
      expect(refused.details).toEqual([
        { field: 'match.where.value[0]', message: `"${cidr}" is not a CIDR (address/prefix, such as 10.0.0.0/8 or 2001:db8::/32)` },
      ]);

      const allowlist = expectError(await call('PATCH', '/v1/settings', { allowlists: { ips: [{ value: cidr, detectors: ['*'] }] } }), 400, 'INVALID_REQUEST');
      expect(JSON.stringify(allowlist.details)).toContain('must be an IP address or CIDR');
    }
  });

  it('matches no range with an event field in a legacy address form, and the canonical address it is taken for does', async () => {
    // Each range holds the address a lenient parser takes the legacy text for.
    expect((await call('POST', '/v1/threat-models', model(['8.0.0.0/8', '10.0.0.0/8']))).statusCode).toBe(201);
    const alerts = async (clientIp: string): Promise<string[]> => {
      const res = await call('POST', '/v1/events', { event: 'custom.probe', actor_id: 'u1', metadata: { client_ip: clientIp } });
      expect(res.statusCode, res.body).toBe(202);
      return (res.json() as { alerts: { type: string }[] }).alerts.map((a) => a.type);
    };
    for (const form of LEGACY_FORMS) expect(await alerts(form), form).toEqual([]);
    expect(await alerts('8.0.0.1')).toEqual(['custom.cidr_probe']);
  });
});
