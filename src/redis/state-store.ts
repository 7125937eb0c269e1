import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { accountScope, assertScopedKey, type AccountScope } from '../event/tenancy.js';
import { globLiteral, mastersOpened, scanKeys, textsOfKey } from './cluster-nodes.js';
import { hashTag } from './script.js';
import { luaScript } from './lua.js';
import {
  DEFAULT_ALERT_MAX_EVENT_IDS,
  DEFAULT_ALERT_MAX_TYPES,
  DEFAULT_DISTINCT_MAX_MEMBERS,
  DEFAULT_ORDERED_MAX_PER_STAGE,
  DEFAULT_SEEN_MAX_MEMBERS,
  DEFAULT_WINDOW_MAX_ENTRIES,
  StateUnavailableError,
  type AlertState,
  type ResultsOf,
  type SequenceStep,
  type StateOp,
  type StateResult,
  type StateStore,
  type StateValue,
} from '../detection/state/state-store.js';
import { errorMessage } from '../util/caught.js';

export interface RedisStateStoreOptions {
  /** Prefix of every key this store writes. Default 'vigil:'. */
  readonly prefix?: string;
}

const STATE_OP_LUA = luaScript('state-op');

/** The script as an ioredis custom command: EVALSHA, loaded on demand (pipelines included). */
const COMMAND = 'vigilStateOp';
type Client = (Redis | Cluster) & { [COMMAND]: (...keysThenArgs: (string | number)[]) => Promise<string> };
type Pipeline = ChainableCommander & { [COMMAND]: (...keysThenArgs: (string | number)[]) => ChainableCommander };

/**
 * The scale-out StateStore: one Redis hash per record (`<prefix>st:{key}`, the hash tag keeps
 * each record on one cluster slot; windows and distinct sets add sorted-set sub-keys
 * `<prefix>st:{key}:<w|d|t>:<field>`, alerts the index `<prefix>st:{key}:a`), one Lua call per op, the calls of one `run` sent together
 * (one pipeline on a standalone server; on a cluster, written back to back to their nodes, so
 * ops on one record keep their order). Each record expires a little after its longest ttl since
 * its last write. The client belongs to the caller; close() leaves it open.
 */
export class RedisStateStore implements StateStore {
  readonly kind = 'redis' as const;
  private readonly client: Client;
  private readonly prefix: string;
  private readonly cluster: boolean;
  /** Runs waiting for a cluster's master connections to open, and what they wait for. */
  private waitingRuns = 0;
  private mastersOpening: Promise<void> = Promise.resolve();

  constructor(client: Redis | Cluster, options: RedisStateStoreOptions = {}) {
    if (!(COMMAND in client)) client.defineCommand(COMMAND, { lua: STATE_OP_LUA });
    this.client = client as Client;
    this.prefix = options.prefix ?? 'vigil:';
    this.cluster = client.isCluster;
  }

  async run<const T extends readonly StateOp[]>(ops: T): Promise<ResultsOf<T>> {
    if (ops.length === 0) return [] as unknown as ResultsOf<T>;
    let replies: string[];
    try {
      replies = this.cluster ? await this.inOrderOnCluster(ops) : await this.pipelined(ops);
    } catch (err) {
      throw new StateUnavailableError(`Redis state store: ${errorMessage(err)}`, { cause: err });
    }
    const out: StateResult[] = new Array(ops.length);
    for (let i = 0; i < ops.length; i++) out[i] = decode(ops[i] as StateOp, replies[i] as string);
    return out as ResultsOf<T>;
  }

  scope(accountId: string): AccountScope {
    return accountScope(accountId);
  }

  /**
   * Two walks over the account's keys (SCAN on each master of a cluster, since one account's
   * records spread over every slot): the first finds the records with a key, field or value that
   * mentions the subject, the second deletes every key of those records (hash, window and
   * distinct sub-keys, alert index).
   */
  async forget(accountId: string, mentions: (text: string) => boolean): Promise<number> {
    accountScope(accountId);
    const pattern = `${globLiteral(this.prefix)}st:{${accountId}|*`;
    const recordOf = (key: string): string => key.slice(0, key.indexOf('}') + 1);
    const marked = new Set<string>();
    try {
      for await (const keys of scanKeys(this.client, pattern))
        for (const key of keys) {
          const record = recordOf(key);
          if (marked.has(record)) continue;
          if (mentions(unescapeTag(key.slice(this.prefix.length))) || (await textsOfKey(this.client, key)).some(mentions)) marked.add(record);
        }
      if (marked.size === 0) return 0;
      for await (const keys of scanKeys(this.client, pattern)) {
        const doomed = keys.filter((key) => marked.has(recordOf(key)));
        // One key per call on a cluster: the keys of a batch lie in different slots.
        await Promise.all(doomed.map((key) => this.client.unlink(key)));
      }
    } catch (err) {
      throw new StateUnavailableError(`Redis state store: ${errorMessage(err)}`, { cause: err });
    }
    return marked.size;
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {}

  /**
   * The script's key count, keys and arguments. Windows and distinct sets keep their entries, and
   * alert records the index of their alerts, in sub-keys of the record (same hash tag, so the
   * same cluster slot).
   */
  private callOf(op: StateOp): (string | number)[] {
    assertScopedKey(op.key);
    const record = `${this.prefix}st:${hashTag(op.key)}`;
    if (op.kind === 'window.add') return [2, record, `${record}:w:${op.field}`, ...argsOf(op)];
    if (op.kind === 'alert.open') return [2, record, `${record}:a`, ...argsOf(op)];
    if (op.kind === 'distinct.add') return [3, record, `${record}:d:${op.field}`, `${record}:t:${op.field}`, ...argsOf(op)];
    return [1, record, ...argsOf(op)];
  }

  /**
   * On a cluster each op is its own call, written back to back to its node. The calls reach
   * Redis in the order sent only over connections already open (see mastersOpened), so a run
   * waits for them; runs that come while others wait queue behind them, in order.
   */
  private inOrderOnCluster(ops: readonly StateOp[]): Promise<string[]> {
    const send = () => Promise.all(ops.map((op) => this.client[COMMAND](...this.callOf(op))));
    if (this.waitingRuns === 0) {
      const opening = mastersOpened(this.client as Cluster);
      if (opening === undefined) return send();
      this.mastersOpening = opening;
    }
    this.waitingRuns++;
    return this.mastersOpening.then(() => {
      this.waitingRuns--;
      return send();
    });
  }

  private async pipelined(ops: readonly StateOp[]): Promise<string[]> {
    const pipeline = this.client.pipeline() as Pipeline;
    for (const op of ops) pipeline[COMMAND](...this.callOf(op));
    const results = (await pipeline.exec()) ?? [];
    const replies: string[] = new Array(results.length);
    for (let i = 0; i < results.length; i++) {
      const [err, reply] = results[i] as [Error | null, unknown];
      if (err) throw err;
      replies[i] = reply as string;
    }
    return replies;
  }
}

const flag = (b: boolean | undefined) => (b ? '1' : '0');

/** ARGV of the script: kind, field, event time, then the kind's own arguments. */
function argsOf(op: StateOp): (string | number)[] {
  switch (op.kind) {
    case 'window.add':
      return ['w', op.field, op.at, op.windowMs, op.amount ?? 1, op.maxEntries ?? DEFAULT_WINDOW_MAX_ENTRIES];
    case 'distinct.add':
      return [
        'd',
        op.field,
        op.at,
        op.windowMs,
        flag(op.member !== undefined),
        op.member ?? '',
        op.fewTries ?? '',
        op.maxMembers ?? DEFAULT_DISTINCT_MAX_MEMBERS,
        flag(op.remove),
      ];
    case 'last.swap':
      return ['l', op.field, op.at, op.ttlMs, flag(op.value !== undefined), op.value === undefined ? '' : JSON.stringify(op.value)];
    case 'seen.add':
      return ['s', op.field, op.at, op.member, op.withinMs, op.ttlMs, flag(op.readOnly), op.maxMembers ?? DEFAULT_SEEN_MAX_MEMBERS];
    case 'counter.add':
      return ['c', op.field, op.at, op.amount, op.ttlMs];
    case 'sequence.mark':
      return ['q', op.field, op.at, op.stage, op.windowMs, JSON.stringify(op.ref)];
    case 'ordered.add':
      return ['o', op.field, op.at, op.stages.join(','), op.stageCount, op.windowMs, JSON.stringify(op.ref), op.maxPerStage ?? DEFAULT_ORDERED_MAX_PER_STAGE];
    case 'alert.open':
      return [
        'ao',
        op.field,
        op.at,
        op.id,
        op.windowMs,
        flag(op.eventId !== undefined),
        op.eventId ?? '',
        op.maxEventIds ?? DEFAULT_ALERT_MAX_EVENT_IDS,
        op.maxAlerts ?? DEFAULT_ALERT_MAX_TYPES,
      ];
    case 'alert.peek':
      return ['ap', op.field, op.at, op.windowMs];
    case 'delete':
      return ['x', op.field, 0];
  }
}

interface StoredAlert {
  i: string;
  c: number;
  f: number;
  l: number;
  /** An empty Lua table encodes as `{}`. */
  e: string[] | Record<string, never>;
}

function alertOf(a: StoredAlert): AlertState {
  return { id: a.i, count: a.c, firstSeen: a.f, lastSeen: a.l, eventIds: Array.isArray(a.e) ? a.e : [] };
}

function stepsOf(reply: string): SequenceStep[] | null {
  if (reply === '') return null;
  return (JSON.parse(reply) as [number, number, string][]).map(([stage, at, ref]) => ({ stage, at, ref: JSON.parse(ref) as StateValue }));
}

function decode(op: StateOp, reply: string): StateResult {
  switch (op.kind) {
    case 'window.add':
    case 'distinct.add':
    case 'seen.add':
      return JSON.parse(reply) as StateResult;
    case 'last.swap': {
      if (reply === '') return { previous: null };
      const bar = reply.indexOf('|');
      return { previous: { at: Number(reply.slice(0, bar)), value: JSON.parse(reply.slice(bar + 1)) as StateValue } };
    }
    case 'counter.add':
      return { value: Number(reply) };
    case 'sequence.mark':
    case 'ordered.add':
      return { steps: stepsOf(reply) };
    case 'alert.open':
      return { opened: reply[0] === '1', alert: alertOf(JSON.parse(reply.slice(1)) as StoredAlert) };
    case 'alert.peek':
      return { alert: reply === '' ? null : alertOf(JSON.parse(reply) as StoredAlert) };
    case 'delete':
      return { deleted: reply !== '0' };
  }
}

/** A key as its parts were before hashTag escaped them (`%`, `{` and `}` inside the tag). */
function unescapeTag(key: string): string {
  return key.replace(/%(25|7b|7d)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
