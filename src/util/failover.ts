/** Health of a shared backend (Redis), as seen by this instance. */
export class BackendHealth {
  private down = false;
  private since = 0;

  constructor(
    readonly name: string,
    private readonly onChange: (degraded: boolean, reason?: unknown) => void = () => undefined,
  ) {}

  get degraded(): boolean {
    return this.down;
  }

  /** The backend failed a call or the connection dropped. */
  markDown(reason?: unknown): void {
    if (this.down) return;
    this.down = true;
    this.since = Date.now();
    this.onChange(true, reason);
  }

  /** The connection is ready again. */
  markUp(): void {
    if (!this.down) return;
    this.down = false;
    this.onChange(false, { downForMs: Date.now() - this.since });
  }
}

/**
 * Wraps every async method of `primary` so that while `health` is degraded, or when a call
 * fails, the same call goes to `fallback` (per-instance memory state) instead: requests keep
 * working with local limits and detection state while the shared backend is away. Used for
 * the limiter, the quota counter and the detection state store alike.
 */
export function withFailover<T extends object>(primary: T, fallback: T, health: BackendHealth): T {
  return new Proxy(primary, {
    get(target, property, receiver) {
      const original = Reflect.get(target, property, receiver) as unknown;
      if (typeof original !== 'function' || property === 'close') return original;
      const backup = Reflect.get(fallback, property) as (...args: unknown[]) => unknown;
      return async (...args: unknown[]) => {
        if (health.degraded) return backup.apply(fallback, args);
        try {
          return await (original as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (err) {
          health.markDown(err);
          return backup.apply(fallback, args);
        }
      };
    },
  });
}
