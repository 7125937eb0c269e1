/**
 * Models stored under looser limits than today's (by an older version of the service, or written
 * to the database directly) cannot make an instance spend its request thread or heap on them:
 * the registry skips a model past the per-model instruction limit, and an account's models past
 * its compiled-memory limit, and keeps the rest in force.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { Store } from '../../src/storage/store.js';
import type { ThreatModelRow } from '../../src/storage/types.js';
import { compileModel } from '../../src/threat-models/compile.js';
import { LIMITS, type ThreatModelDefinition } from '../../src/threat-models/model.js';
import { ThreatModelRegistry } from '../../src/threat-models/registry.js';

const regexModel = (name: string, patterns: readonly string[]): ThreatModelDefinition => ({
  name,
  enabled: true,
  match: { event: ['custom.*'], where: { any: patterns.map((value) => ({ field: 'metadata.x', op: 'regex' as const, value })) } },
  outcome: { alert: 'custom.stored', severity: 'low', points: 10, tags: [] },
});

/** About 1,800 RE2 instructions each. */
const heavy = (i: number) => `(?:.{1,900})q${i}`;

describe('the registry and models stored under older limits', () => {
  let store: Store;
  let state: MemoryStateStore;
  const skipped: string[] = [];
  let registry: ThreatModelRegistry;

  beforeAll(async () => {
    store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    await store.accounts.createAccount({ id: 'acc_old', name: 'old', plan: 'pro', createdAt: 0 });
    state = new MemoryStateStore();
    registry = new ThreatModelRegistry(store.threatModels, state, { onCompileError: (row) => skipped.push(row.id) });
  });
  afterAll(async () => {
    await state.close();
    await store.close();
  });

  const save = (id: string, definition: ThreatModelDefinition): Promise<ThreatModelRow> =>
    store.threatModels.createThreatModel({
      id,
      accountId: 'acc_old',
      enabled: true,
      definition: { ...definition },
      source: { format: 'native' },
      createdAt: 1,
    });

  it('compiles no model past the per-model instruction limit', () => {
    expect(() => compileModel('tm_x', 1, regexModel('too many', [heavy(1), heavy(2), heavy(3)]))).toThrow(/over the limit per model/);
    expect(compileModel('tm_y', 1, regexModel('fits', [heavy(1), heavy(2)])).memoryBytes).toBeGreaterThan(0);
  });

  it('skips stored models past either limit and keeps the others in force', async () => {
    await save('tm_light', regexModel('light', ['^admin$']));
    await save('tm_heavy', regexModel('three heavy patterns', [heavy(1), heavy(2), heavy(3)]));
    // Two heavy patterns each: under the per-model limits, but together far over the account's.
    const perModel = compileModel('tm_probe', 1, regexModel('probe', [heavy(0), heavy(1)])).memoryBytes;
    const many = Math.ceil(LIMITS.accountMemoryBytes / perModel) + 3;
    for (let i = 0; i < many; i++) await save(`tm_pair_${String(i).padStart(3, '0')}`, regexModel(`pair ${i}`, [heavy(2 * i), heavy(2 * i + 1)]));

    const models = await registry.inForce('acc_old');
    const ids = models.map((m) => m.id);
    expect(ids).toContain('tm_light');
    expect(ids).not.toContain('tm_heavy');
    expect(skipped).toContain('tm_heavy');
    expect(models.reduce((sum, m) => sum + m.memoryBytes, 0)).toBeLessThanOrEqual(LIMITS.accountMemoryBytes);
    expect(skipped.filter((id) => id.startsWith('tm_pair_')).length).toBeGreaterThanOrEqual(3);
  });
});
