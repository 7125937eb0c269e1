import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCidr as parseRange, type Cidr } from '../../src/util/ip.js';

const parseCidr = (text: string): Cidr => parseRange(text) as Cidr;
import { send } from '../../src/webhooks/send.js';
import { checkUrl, forbiddenAddress, type Resolver, type SsrfGuard } from '../../src/webhooks/ssrf.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

describe('forbidden addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['fc00::1', 'unique local'],
    ['100.64.1.1', 'carrier-grade NAT'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['64:ff9b::a00:1', 'reserved'],
  ])('%s is refused (%s)', (address, kind) => {
    expect(forbiddenAddress(address, [])).toContain(kind);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111'])('%s is public', (address) => {
    expect(forbiddenAddress(address, [])).toBeUndefined();
  });

  it('an allowed range lets its addresses through, and only those', () => {
    const allowed = [parseCidr('127.0.0.1/32'), parseCidr('10.20.0.0/16')];
    expect(forbiddenAddress('127.0.0.1', allowed)).toBeUndefined();
    expect(forbiddenAddress('10.20.3.4', allowed)).toBeUndefined();
    expect(forbiddenAddress('127.0.0.2', allowed)).toContain('loopback');
    expect(forbiddenAddress('10.21.0.1', allowed)).toContain('private');
  });
});

describe('DNS rebinding: the address is checked again at connect time', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(() => receiver.stop());

  it('a name that resolved to a public address when saved and to loopback at delivery is refused, and nothing connects', async () => {
    let answer = '93.184.215.14';
    const resolve: Resolver = async () => [{ address: answer, family: 4 }];
    const guard: SsrfGuard = { allowed: [], resolve };
    const url = `http://hooks.example.test:${receiver.port}/hook`;
    expect(await checkUrl(url, guard)).toMatchObject({ ok: true });
    answer = '127.0.0.1';
    const result = await send(new URL(url), {}, '{}', 2000, guard);
    expect(result).toMatchObject({ kind: 'refused' });
    expect(result.kind === 'refused' && result.reason).toContain('127.0.0.1');
    expect(receiver.received).toHaveLength(0);
    expect(await checkUrl(url, guard)).toMatchObject({ ok: false });
  });

  it('a name with one forbidden address among public ones is refused', async () => {
    const guard: SsrfGuard = {
      allowed: [],
      resolve: async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '10.0.0.8', family: 4 },
      ],
    };
    expect(await checkUrl('https://mixed.example.test/hook', guard)).toMatchObject({ ok: false });
    expect(await send(new URL('https://mixed.example.test/hook'), {}, '{}', 2000, guard)).toMatchObject({ kind: 'refused' });
  });

  it('connects to the checked address: an allowed resolution reaches the receiver', async () => {
    const guard: SsrfGuard = { allowed: [parseCidr('127.0.0.1/32')], resolve: async () => [{ address: '127.0.0.1', family: 4 }] };
    const result = await send(new URL(`http://hooks.example.test:${receiver.port}/hook`), { 'webhook-id': 'whd_x' }, '{"a":1}', 2000, guard);
    expect(result).toMatchObject({ kind: 'answered', status: 200 });
    expect(receiver.received[0]).toMatchObject({ body: '{"a":1}', headers: { host: `hooks.example.test:${receiver.port}`, 'webhook-id': 'whd_x' } });
  });
});
