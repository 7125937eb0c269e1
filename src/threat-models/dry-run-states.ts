/**
 * Where a paged dry run keeps its evaluation state between two pages: the windows, distinct
 * sets, sequences and alerts its model built over the events before the page, so thresholds
 * and sequences that span pages count exactly as one evaluation of the whole range would.
 * A state is saved under its run and the page it starts (one cursor serves one page), for
 * `DRY_RUN_STATE_TTL_MS`; loading a page's state consumes it.
 *
 * Embedded: `MemoryDryRunStates`, at most `max` states in the process. Scaled out: Redis
 * (src/redis/dry-run-states.ts), so the next page may run on any instance.
 */
export interface DryRunStates {
  save(accountId: string, run: string, page: number, state: Uint8Array): Promise<boolean>;
  /** The state saved for this page of the run, removed from the store; undefined when none is (spent, expired or never saved). */
  take(accountId: string, run: string, page: number): Promise<Uint8Array | undefined>;
  /** Erasure: drops every state saved for the account's runs (a run then says it cannot go on). */
  forgetAccount?(accountId: string): Promise<void>;
}

export const DRY_RUN_STATE_TTL_MS = 10 * 60_000;

export class MemoryDryRunStates implements DryRunStates {
  private readonly states = new Map<string, { readonly state: Uint8Array; readonly until: number }>();

  constructor(private readonly max = 16) {}

  async save(accountId: string, run: string, page: number, state: Uint8Array): Promise<boolean> {
    const now = Date.now();
    for (const [key, s] of this.states) if (s.until <= now) this.states.delete(key);
    // The oldest saved state goes first: its run has waited longest for its next page.
    while (this.states.size >= this.max) this.states.delete(this.states.keys().next().value as string);
    this.states.set(keyOf(accountId, run, page), { state, until: now + DRY_RUN_STATE_TTL_MS });
    return true;
  }

  async take(accountId: string, run: string, page: number): Promise<Uint8Array | undefined> {
    const key = keyOf(accountId, run, page);
    const saved = this.states.get(key);
    this.states.delete(key);
    return saved !== undefined && saved.until > Date.now() ? saved.state : undefined;
  }

  async forgetAccount(accountId: string): Promise<void> {
    const prefix = `${accountId}|`;
    for (const key of [...this.states.keys()]) if (key.startsWith(prefix)) this.states.delete(key);
  }
}

const keyOf = (accountId: string, run: string, page: number): string => `${accountId}|${run}|${page}`;
