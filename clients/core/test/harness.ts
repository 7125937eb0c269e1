/**
 * Replays a conformance scenario (clients/conformance/scenarios) against a client of this
 * repository and the scripted server. It runs in Node and, bundled, in a browser page: it uses
 * nothing but `fetch`. A mismatch throws an Error that says which step and what differed.
 */
import type { BatchResult, ClientOptions, ClientStats, Clock, TrackResult, VigilEvent } from '../src/index.js';

export interface Step {
  op: string;
  [field: string]: unknown;
}
export interface Scenario {
  name: string;
  description: string;
  client: Record<string, unknown>;
  steps: Step[];
}

/** What the harness needs of a client. */
export interface ReplayedClient {
  track(event: VigilEvent): Promise<TrackResult>;
  trackBatch(events: VigilEvent[]): Promise<BatchResult>;
  flush(): Promise<void>;
  idle(): Promise<void>;
  stats(): ClientStats;
}

export const DEFAULT_API_KEY = 'vgl_pk_conformance0123456789abcdef';

/** Virtual time: `advance` moves it and runs the timers that came due, in due order. */
export class FakeClock implements Clock {
  private current = 1_800_000_000_000;
  private timers: { due: number; fn: () => void; id: number }[] = [];
  private nextId = 0;

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const id = this.nextId++;
    this.timers.push({ due: this.current + ms, fn, id });
    return () => {
      this.timers = this.timers.filter((t) => t.id !== id);
    };
  }

  advance(ms: number): void {
    const target = this.current + ms;
    while (true) {
      const next = this.timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = next.due;
      next.fn();
    }
    this.current = target;
  }
}

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeKeys(v)]));
}

/** The scenario's `client` options (snake_case) as this library's options. */
export function clientOptions(client: Record<string, unknown>, baseUrl: string, clock: Clock): ClientOptions {
  const options: Record<string, unknown> = { apiKey: DEFAULT_API_KEY, mode: 'direct', baseUrl, clock, sleep: async () => undefined };
  for (const [key, value] of Object.entries(client)) options[camel(key)] = value;
  return options as unknown as ClientOptions;
}

/** Recursive comparison with `<any>` and `<id:NAME>` (see the kit's README). Returns a problem or null. */
export function mismatch(expected: unknown, actual: unknown, where: string, ids: Map<string, string>): string | null {
  if (expected === '<any>') return actual === undefined ? `${where}: missing` : null;
  if (typeof expected === 'string' && expected.startsWith('<id:') && expected.endsWith('>')) {
    const name = expected.slice(4, -1);
    if (typeof actual !== 'string' || actual === '') return `${where}: expected an id, got ${JSON.stringify(actual)}`;
    const bound = ids.get(name);
    if (bound !== undefined) return bound === actual ? null : `${where}: expected the id bound to ${name} (${bound}), got ${actual}`;
    for (const [other, value] of ids) if (value === actual) return `${where}: id ${actual} is already bound to ${other}, expected a new one for ${name}`;
    ids.set(name, actual);
    return null;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `${where}: expected ${expected.length} items, got ${Array.isArray(actual) ? actual.length : JSON.stringify(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const problem = mismatch(expected[i], actual[i], `${where}[${i}]`, ids);
      if (problem) return problem;
    }
    return null;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') return `${where}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      const problem = mismatch(value, (actual as Record<string, unknown>)[key], `${where}.${key}`, ids);
      if (problem) return problem;
    }
    return null;
  }
  return expected === actual ? null : `${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Runs every step of `scenario`; `makeClient` builds the client under test from the options. */
export async function replay(scenario: Scenario, serverUrl: string, makeClient: (options: ClientOptions) => ReplayedClient): Promise<void> {
  const clock = new FakeClock();
  const client = makeClient(clientOptions(scenario.client, serverUrl, clock));
  const ids = new Map<string, string>();
  let last: unknown;
  const control = (path: string, body?: unknown) =>
    fetch(
      serverUrl + path,
      body === undefined ? { method: 'GET' } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
    );
  await control('/__reset', {});
  for (const [index, step] of scenario.steps.entries()) {
    const where = `${scenario.name} step ${index + 1} (${step.op})`;
    switch (step.op) {
      case 'script':
        await control('/__script', { responses: step.responses });
        break;
      case 'track':
        last = await client.track(step.event as VigilEvent);
        break;
      case 'track_batch':
        last = await client.trackBatch(step.events as VigilEvent[]);
        break;
      case 'advance':
        clock.advance(step.ms as number);
        break;
      case 'flush':
        await client.flush();
        break;
      case 'expect_requests': {
        const { requests } = (await (await control('/__requests')).json()) as { requests: Recorded[] };
        const expected = step.requests as Record<string, unknown>[];
        const seen = requests.map((r) => `${r.method} ${r.path}`).join(', ') || 'none';
        if (requests.length !== expected.length) throw new Error(`${where}: expected ${expected.length} requests, got ${requests.length} (${seen})`);
        const problem = expected.map((e, i) => mismatch(e, requests[i], `${where}: request ${i + 1}`, ids)).find((p) => p !== null);
        if (problem) throw new Error(problem);
        break;
      }
      case 'expect_result': {
        const problem = mismatch(step.result, snakeKeys(last), `${where}: result`, ids);
        if (problem) throw new Error(problem);
        break;
      }
      case 'expect_stats': {
        const problem = mismatch(step.stats, snakeKeys(client.stats()), `${where}: stats`, ids);
        if (problem) throw new Error(problem);
        break;
      }
      default:
        throw new Error(`${where}: unknown op`);
    }
    await client.idle();
  }
}
