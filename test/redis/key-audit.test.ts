import { expect, it } from 'vitest';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { unscopedKeys } from '../helpers/redis-keys.js';

const redis = await connectTestRedis('key-audit');

describeWithRedis('the Redis key audit every scale-out test runs at cleanup', redis, (r) => {
  it('accepts the layouts the service writes and names every other key', async () => {
    const good = [
      'st:{acc_01KX|fail|actor:alice}',
      'st:{acc_01KX|fail|actor:alice}:w:n',
      'st:{acc_01KX|alerts|actor:alice}:a',
      'quota:{acc_01KX}:2026-11',
      'rl:k:{key_01KX}',
      'rl:ip:{203.0.113.7}',
      'rl:ip:{2001:db8::1}',
      'rl:ip:{public 203.0.113.7}',
    ];
    const bad = [
      'st:{[object Promise]|w|actor:alice}',
      'st:{undefined|w|actor:alice}',
      'st:{#0|w|actor:alice}',
      'quota:{null}:2026-11',
      'rl:k:{[object Object]}',
      'stray',
    ];
    for (const key of [...good, ...bad]) await r.client.set(`${r.prefix}${key}`, '1');
    expect((await unscopedKeys(r.client, r.prefix)).sort()).toEqual(bad.map((k) => `${r.prefix}${k}`).sort());
  });
});
