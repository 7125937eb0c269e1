import { afterEach, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/accounts/accounts.js';
import { AccountStamps } from '../../src/detection/state/stamps.js';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { Authenticator } from '../../src/http/authenticator.js';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite.js';
import { ManualClock } from '../../src/util/clock.js';

describe('Authenticator', () => {
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  /** A real store with one account and secret key; `lookups` counts the key lookups that reach the store. */
  async function setUp() {
    const sqlite = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    store = sqlite;
    await sqlite.migrate();
    const clock = new ManualClock();
    const accounts = new Accounts(sqlite.accounts, DEFAULT_PLANS, clock);
    const account = await accounts.create('acme', 'pro');
    if (!account.ok) throw new Error('account not created');
    const created = await accounts.createKey(account.value.id, 'secret');
    if (!created.ok) throw new Error('key not created');
    let lookups = 0;
    const findKeyByHash = sqlite.accounts.findKeyByHash.bind(sqlite);
    sqlite.accounts.findKeyByHash = (hash) => {
      lookups++;
      return findKeyByHash(hash);
    };
    const authenticator = new Authenticator(sqlite.accounts, DEFAULT_PLANS, clock, { ttlMs: 2_000 });
    return { clock, accounts, authenticator, key: created.value.key, keyId: created.value.record.id, lookups: () => lookups };
  }

  it('answers a key seen in the last two seconds from its cache, and looks it up again after that', async () => {
    const { clock, authenticator, key, lookups } = await setUp();
    const verdict = await authenticator.authenticate(key);
    expect(verdict.ok && verdict.ctx.account.name).toBe('acme');
    expect(lookups()).toBe(1);

    clock.advance(1_999);
    expect(await authenticator.authenticate(key)).toEqual(verdict);
    expect(lookups()).toBe(1);

    clock.advance(1);
    await authenticator.authenticate(key);
    expect(lookups()).toBe(2);
  });

  it('answers a missing key or a string that is not a key without a lookup', async () => {
    const { authenticator, lookups } = await setUp();
    expect(await authenticator.authenticate(undefined)).toMatchObject({ ok: false, message: expect.stringContaining('Missing API key') });
    expect(await authenticator.authenticate('not-a-key')).toEqual({ ok: false, message: 'Invalid API key.' });
    expect(lookups()).toBe(0);
  });

  it('refuses a revoked key on the next request once the cache is cleared', async () => {
    const { accounts, authenticator, key, keyId } = await setUp();
    expect((await authenticator.authenticate(key)).ok).toBe(true);
    await accounts.revokeKey(keyId);
    authenticator.invalidate();
    expect(await authenticator.authenticate(key)).toEqual({ ok: false, message: 'Invalid API key.' });
  });

  it('with stamps shared by two instances, a change answered on one is in force on the other at once, and a cached verdict costs no lookup while nothing changed', async () => {
    const { clock, accounts, key, keyId, lookups } = await setUp();
    const state = new MemoryStateStore({ clock });
    const [one, two] = [0, 1].map(() => new Authenticator(store!.accounts, DEFAULT_PLANS, clock, { stamps: new AccountStamps(state) }));
    for (const t of [one, two, one, two]) expect((await t!.authenticate(key)).ok).toBe(true);
    const settled = lookups();
    for (const t of [one, two]) await t!.authenticate(key);
    expect(lookups()).toBe(settled);

    const accountId = (await store!.accounts.getKey(keyId))!.accountId;
    await accounts.updateKey(keyId, { scopes: ['read'] });
    await one!.changed(accountId);
    const narrowed = await two!.authenticate(key);
    expect(narrowed.ok && narrowed.ctx.principal).toMatchObject({ kind: 'key', scopes: ['read'] });
    await accounts.revokeKey(keyId);
    await one!.changed(accountId);
    expect(await two!.authenticate(key)).toEqual({ ok: false, message: 'Invalid API key.' });
    await state.close();
  });
});
