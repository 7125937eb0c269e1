/** One window the service enforces on the key, as `RateLimit-Policy` names it. */
export interface Policy {
  readonly name: string;
  /** Units the window holds (`q`). */
  readonly quota: number;
  /** The window in seconds (`w`). */
  readonly windowS: number;
}

/** What the client assumes before any answer named the key's policies: the smallest plan. */
export const ASSUMED_POLICIES: readonly Policy[] = Object.freeze([
  { name: 'second', quota: 5, windowS: 1 },
  { name: 'minute', quota: 30, windowS: 60 },
]);

/**
 * How long a unit stays held: the service's sliding windows keep a unit at most 1.1 × w, and
 * 100 ms more cover the network's jitter between two requests.
 */
export const holdMs = (policy: Policy): number => policy.windowS * 1100 + 100;

/** The members of a structured-field list, split on the commas outside quoted strings. */
function members(header: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < header.length; i++) {
    const c = header[i] as string;
    if (quoted && c === '\\') {
      current += c + (header[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      out.push(current);
      current = '';
    } else current += c;
  }
  out.push(current);
  return out;
}

const INTEGER = /^[0-9]{1,15}$/;

/**
 * The policies of a `RateLimit-Policy` field (`"second";q=5;w=1, "minute";q=30;w=60`), or null
 * when it names none that is valid: a member needs a quoted name, an integer `q` >= 1 and an
 * integer `w` >= 1; other parameters are ignored.
 */
export function parsePolicies(header: string | null | undefined): Policy[] | null {
  if (typeof header !== 'string' || header.length > 4096) return null;
  const policies: Policy[] = [];
  for (const member of members(header)) {
    const parts = member.split(';').map((p) => p.trim());
    const name = parts[0] ?? '';
    if (name.length < 2 || !name.startsWith('"') || !name.endsWith('"')) continue;
    let quota = 0;
    let windowS = 0;
    for (const param of parts.slice(1)) {
      const [key, value = ''] = param.split('=', 2).map((p) => p.trim());
      if (key === 'q' && INTEGER.test(value)) quota = Number(value);
      if (key === 'w' && INTEGER.test(value)) windowS = Number(value);
    }
    if (quota >= 1 && windowS >= 1) policies.push({ name: name.slice(1, -1).replace(/\\(.)/g, '$1'), quota, windowS });
  }
  return policies.length > 0 ? policies : null;
}

/**
 * Paces requests by the key's policies so that none is sent into a certain 429. Each policy
 * keeps the times its units were taken; a request costs one unit of `"second"` (the service
 * counts requests there) and one per event of every other policy. A request goes when every
 * policy has room for its cost, which may be later than now; the caller waits for it or, beyond
 * its bound, does not send.
 */
export class Pacer {
  private policies: readonly Policy[] = ASSUMED_POLICIES;
  private readonly held = new Map<string, number[]>();
  /** An answer has named the policies (before that, the smallest plan is assumed). */
  learned = false;

  /** Takes the policies of an answer's `RateLimit-Policy`, if it names any. */
  learn(header: string | null | undefined): void {
    const policies = parsePolicies(header);
    if (policies === null) return;
    this.policies = policies;
    this.learned = true;
  }

  current(): readonly Policy[] {
    return this.policies;
  }

  /**
   * Reserves room for a request of `events` events: the ms to wait before sending it, or null
   * when that would be longer than `maxDelayMs` (nothing is then taken).
   */
  reserve(events: number, now: number, maxDelayMs: number): number | null {
    let at = now;
    for (const policy of this.policies) {
      const units = this.unitsOf(policy, now);
      const cost = Math.min(policy.name === 'second' ? 1 : events, policy.quota);
      if (units.length + cost > policy.quota) at = Math.max(at, (units[units.length - policy.quota + cost - 1] as number) + holdMs(policy));
    }
    const wait = at - now;
    if (wait > maxDelayMs) return null;
    for (const policy of this.policies) {
      const units = this.unitsOf(policy, now);
      const cost = Math.min(policy.name === 'second' ? 1 : events, policy.quota);
      let i = units.length;
      while (i > 0 && (units[i - 1] as number) > at) i--;
      units.splice(i, 0, ...new Array<number>(cost).fill(at));
    }
    return wait;
  }

  /**
   * The answer to a request that took its units at `takenAt` arrived at `answeredAt`: its units
   * are held from then on. The service counted the request when it arrived, which is after it
   * was handed over (a browser queues requests for a free connection, a busy service reads them
   * late) and before it answered, so a hold that starts at the answer never ends early.
   */
  settle(events: number, takenAt: number, answeredAt: number): void {
    if (answeredAt <= takenAt) return;
    for (const policy of this.policies) {
      const units = this.held.get(policy.name);
      if (!units) continue;
      let cost = Math.min(policy.name === 'second' ? 1 : events, policy.quota);
      for (let i = units.length - 1; i >= 0 && cost > 0; i--)
        if (units[i] === takenAt) {
          units.splice(i, 1);
          cost--;
          let j = units.length;
          while (j > 0 && (units[j - 1] as number) > answeredAt) j--;
          units.splice(j, 0, answeredAt);
        }
    }
  }

  /** The policy's held units at `now`, oldest first (released ones are forgotten). */
  private unitsOf(policy: Policy, now: number): number[] {
    let units = this.held.get(policy.name);
    if (!units) {
      units = [];
      this.held.set(policy.name, units);
    }
    const hold = holdMs(policy);
    let released = 0;
    while (released < units.length && (units[released] as number) + hold <= now) released++;
    if (released > 0) units.splice(0, released);
    return units;
  }
}
