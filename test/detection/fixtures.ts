/** Loading the detector scenario fixtures (format documented in scenarios.test.ts). */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { duration, type EventSpec } from './helpers.js';

interface Line extends EventSpec {
  repeat?: number;
  every?: string | number;
}
/** What one event must get: its risk action and the alerts it raised or updated. */
export interface Expected {
  decision?: 'allow' | 'challenge' | 'block';
  raises?: string[];
}
export interface Scenario {
  description: string;
  settings?: Record<string, unknown>;
  order?: 'time' | 'listed';
  defaults?: Partial<EventSpec>;
  events: (Line & Expected)[];
  expect: { alerts: string[]; absent?: string[]; opened?: Record<string, number>; count?: Record<string, number> };
}

export const FIXTURES_ROOT = join(import.meta.dirname, '../fixtures/detectors');

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return files(path);
      return name.endsWith('.yaml') ? [path] : [];
    });
}

export function loadScenarios(root = FIXTURES_ROOT): { name: string; scenario: Scenario }[] {
  return files(root).map((path) => ({ name: relative(root, path).replace(/\.yaml$/, ''), scenario: parse(readFileSync(path, 'utf8')) as Scenario }));
}

function fill<T>(value: T, i: number): T {
  if (typeof value === 'string')
    return value.replace(/\{i(?:([%/])(\d+))?\}/g, (_, op?: string, n?: string) =>
      String(op === '%' ? i % Number(n) : op === '/' ? Math.floor(i / Number(n)) : i),
    ) as T;
  if (Array.isArray(value)) return value.map((v) => fill(v, i)) as T;
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, i)])) as T;
  return value;
}

/** The scenario's events with repetitions expanded and `at` in ms, in delivery order. */
export function expand(scenario: Scenario): (EventSpec & Expected & { at: number })[] {
  const events = scenario.events.flatMap((line) => {
    const { repeat = 1, every = 0, ...spec } = { ...scenario.defaults, ...line } as Line;
    return Array.from({ length: repeat }, (_, i) => ({ ...fill(spec, i), at: duration(spec.at) + i * duration(every) }));
  });
  return scenario.order === 'listed' ? events : events.sort((a, b) => a.at - b.at);
}
