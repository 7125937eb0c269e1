import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCidr as parseRange, type Cidr } from '../../src/util/ip.js';

const parseCidr = (text: string): Cidr => parseRange(text) as Cidr;
import { send } from '../../src/webhooks/send.js';
import { checkUrl, forbiddenAddress, type Resolver, type SsrfGuard } from '../../src/webhooks/ssrf.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

// Each IPv6 form that carries an IPv4 address, with a loopback, a private and a public one embedded.
const embedding: [form: string, loopback: string, privateAddress: string, publicAddress: string][] = [
  ['IPv4-compatible', '::7f00:1', '::a00:1', '::5db8:d70e'],
  ['IPv4-translated', '::ffff:0:7f00:1', '::ffff:0:a00:1', '::ffff:0:5db8:d70e'],
  ['NAT64', '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b::5db8:d70e'],
  ['6to4', '2002:7f00:1::1', '2002:a00:1::1', '2002:5db8:d70e::1'],
  // The client address is stored bit-inverted: 80ff:fffe is 127.0.0.1.
  ['Teredo', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001:0:4136:e378:8000:63bf:a247:28f1'],
];

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

  it.each(embedding)('%s: refused whatever it embeds, and the reason names the embedded address', (_form, loopback, private_, public_) => {
    expect(forbiddenAddress(loopback, [])).toMatch(/reserved.*embedding 127\.0\.0\.1, a loopback address/);
    expect(forbiddenAddress(private_, [])).toMatch(/reserved.*embedding 10\.0\.0\.1, a private address/);
    expect(forbiddenAddress(public_, [])).toMatch(/reserved.*embedding 93\.184\.215\.14$/);
  });

  it('the dotted form of an IPv4-compatible address is refused like its hexadecimal form', () => {
    expect(forbiddenAddress('::127.0.0.1', [])).toMatch(/IPv4-compatible.*embedding 127\.0\.0\.1, a loopback address/);
    expect(forbiddenAddress('::169.254.169.254', [])).toMatch(/embedding 169\.254\.169\.254, a cloud metadata address/);
  });

  it('local-use NAT64 (64:ff9b:1::/48) is refused: where it carries an IPv4 address depends on the network', () => {
    expect(forbiddenAddress('64:ff9b:1::7f00:1', [])).toContain('local-use NAT64');
    expect(forbiddenAddress('64:ff9b:1:abcd::5db8:d70e', [])).toContain('reserved');
  });

  it('an IPv4-mapped address is the IPv4 address itself: refused when that is, reachable when it is public', () => {
    expect(forbiddenAddress('::ffff:7f00:1', [])).toContain('loopback');
    expect(forbiddenAddress('::ffff:93.184.215.14', [])).toBeUndefined();
  });

  it('the unspecified and loopback IPv6 addresses keep their own names', () => {
    expect(forbiddenAddress('::', [])).toContain('unspecified');
    expect(forbiddenAddress('::1', [])).toContain('loopback');
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

  it.each(embedding)('a name resolving to a %s form embedding loopback is refused when saved and at delivery; nothing connects', async (_form, loopback) => {
    const guard: SsrfGuard = { allowed: [parseCidr('127.0.0.1/32')], resolve: async () => [{ address: loopback, family: 6 }] };
    const url = `http://hooks.example.test:${receiver.port}/hook`;
    const saved = await checkUrl(url, guard);
    expect(saved).toMatchObject({ ok: false });
    expect(!saved.ok && saved.reason).toMatch(/embedding 127\.0\.0\.1/);
    const result = await send(new URL(url), {}, '{}', 2000, guard);
    expect(result).toMatchObject({ kind: 'refused' });
    expect(result.kind === 'refused' && result.reason).toMatch(/embedding 127\.0\.0\.1/);
    expect(receiver.received).toHaveLength(0);
  });

  it('an IPv4-compatible literal in the URL ([::127.0.0.1]) is refused at delivery too', async () => {
    const guard: SsrfGuard = { allowed: [parseCidr('127.0.0.1/32')], resolve: async () => [] };
    const result = await send(new URL(`http://[::127.0.0.1]:${receiver.port}/hook`), {}, '{}', 2000, guard);
    expect(result).toMatchObject({ kind: 'refused' });
    expect(receiver.received).toHaveLength(0);
  });

  it('connects to the checked address: an allowed resolution reaches the receiver', async () => {
    const guard: SsrfGuard = { allowed: [parseCidr('127.0.0.1/32')], resolve: async () => [{ address: '127.0.0.1', family: 4 }] };
    const result = await send(new URL(`http://hooks.example.test:${receiver.port}/hook`), { 'webhook-id': 'whd_x' }, '{"a":1}', 2000, guard);
    expect(result).toMatchObject({ kind: 'answered', status: 200 });
    expect(receiver.received[0]).toMatchObject({ body: '{"a":1}', headers: { host: `hooks.example.test:${receiver.port}`, 'webhook-id': 'whd_x' } });
  });
});
