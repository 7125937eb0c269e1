import { type Kysely } from 'kysely';
import { isLostConnection, isRejectedData } from '../errors.js';
import type { Database } from '../schema.js';
import { StoreRejectedError, StoreUnavailableError } from '../store.js';

export type Row<T extends keyof Database> = Database[T];

/** PostgreSQL answers some numbers as text, SQLite as numbers. */
export const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
export const parseJson = <T>(text: string): T => JSON.parse(text) as T;

/** Escapes LIKE wildcards so user filters match literally. */
export const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A page of rows fetched with one row more than `limit`: the extra row says that a next page exists. */
export function pageOf<R, T extends { readonly id: string }>(rows: readonly R[], limit: number, map: (row: R) => T): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit).map(map);
  return { items, nextCursor: rows.length > limit ? (items[items.length - 1]?.id ?? null) : null };
}

/** Turns a database failure into the Store contract's errors. */
export function translate(what: string, err: unknown): Error {
  if (err instanceof StoreUnavailableError || err instanceof StoreRejectedError) return err;
  const message = `${what} failed: ${(err as Error | undefined)?.message ?? String(err)}`;
  if (isRejectedData(err)) return new StoreRejectedError(message, { cause: err });
  return new StoreUnavailableError(message, { cause: err });
}

export interface KyselyAccessOptions {
  /**
   * Attempts for an operation whose pooled connection turned out dead (server restart,
   * failover, pg_terminate_backend while idle) and that certainly wrote nothing: reads, and
   * commits that failed before their transaction began. Every idle connection of the pool
   * may be dead at once, so a pool wants its size + 1. Default 1 (no retry).
   */
  readonly staleConnectionAttempts?: number;
}

/**
 * What every Kysely aggregate store shares: the connection, the backend's kind, and how a call
 * turns database failures into the Store contract's errors. The SQL of the aggregates is
 * portable; a backend overrides the few statements where SQLite and PostgreSQL differ.
 */
export class KyselyAccess {
  constructor(
    readonly db: Kysely<Database>,
    readonly kind: 'sqlite' | 'postgres',
    private readonly options: KyselyAccessOptions = {},
  ) {}

  get attempts(): number {
    return this.options.staleConnectionAttempts ?? 1;
  }

  /** Runs a write, turning database failures into StoreUnavailableError / StoreRejectedError. */
  async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translate(what, err);
    }
  }

  /** Runs a read; a read is safe to repeat, so a dead pooled connection costs a retry, not an error. */
  async read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= this.attempts || !isLostConnection(err)) throw translate(what, err);
      }
    }
  }

  /**
   * True when no stored row can hold one of these lookup values, so the answer is "not found"
   * without asking: PostgreSQL text cannot contain U+0000 (it would refuse the parameter
   * itself); SQLite can hold any text.
   */
  unmatchable(...values: (string | undefined)[]): boolean {
    if (this.kind !== 'postgres') return false;
    for (const v of values) if (v !== undefined && v.includes('\u0000')) return true;
    return false;
  }
}
