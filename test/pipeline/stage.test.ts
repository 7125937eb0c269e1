import { describe, expect, it } from 'vitest';
import { Exit, StageList } from '../../src/pipeline/stage.js';

const refused = new Exit({ ok: false, rejection: { code: 'INVALID_EVENT', message: 'no' } }, 'rejected_invalid', 1);

describe('a list of stages', () => {
  it('hands each stage what the one before it answered, synchronous or not, in order', async () => {
    const ran: string[] = [];
    const list = StageList.of((n: number) => (ran.push('a'), n + 1))
      .and(async (n: number) => (ran.push('b'), `${n}`))
      .and((s: string) => (ran.push('c'), [s, s]));
    expect(await list.run(1)).toEqual(['2', '2']);
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('stops on the first exit: the stages after it never run', async () => {
    const ran: string[] = [];
    const list = StageList.of((n: number) => (ran.push('a'), n))
      .and(async (n: number) => (ran.push('b'), n > 0 ? refused : n))
      .and((n: number) => (ran.push('c'), n));
    expect(await list.run(1)).toBe(refused);
    expect(ran).toEqual(['a', 'b']);
    ran.length = 0;
    expect(await list.run(0)).toBe(0);
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it("rejects with a stage's failure, thrown or rejected, and runs nothing after it", async () => {
    const ran: string[] = [];
    const thrown = StageList.of((): number => {
      throw new Error('thrown');
    }).and((n: number) => (ran.push('after'), n));
    await expect(thrown.run(undefined as never)).rejects.toThrow('thrown');
    const rejected = StageList.of(async (): Promise<number> => Promise.reject(new Error('rejected'))).and((n: number) => (ran.push('after'), n));
    await expect(rejected.run(undefined as never)).rejects.toThrow('rejected');
    expect(ran).toEqual([]);
  });
});
