/**
 * What custom threat models may cost the request thread, and what happens to a model that costs
 * more: the one place that holds the numbers (docs/guides/threat-models.md, "Limits" and "Cost").
 *
 * Two bounds, at two time scales:
 *   - per event, deterministic: evaluating an account's models over one event carries a WorkMeter.
 *     Every string, glob and regex test is charged its worst-case cost before it runs; a test that
 *     would overrun is not run, counts as not matched, and the account's remaining models skip the
 *     event. A single call of the regex engine cannot be interrupted, so this is the only bound
 *     that holds while a test runs.
 *   - sustained, measured: ModelCostWatch (cost-watch.ts) times each model's share of each event;
 *     an account whose models stay over SUSPENSION_POLICY.eventMicros gets its heaviest model
 *     suspended, on every instance, until the customer saves or re-enables it.
 */

export const EVALUATION_BUDGET = Object.freeze({
  /**
   * Steps one test may take. A regex test's worst case is its RE2 instructions times the text's
   * length (RE2JS runs a step in about 10 ns), so this keeps one call of the engine, which nothing
   * can interrupt, to a few milliseconds: a 2,000-instruction pattern (the most a pattern may
   * compile to) still runs over 124 characters, a 100-instruction pattern over 2,499.
   */
  callSteps: 250_000,
  /**
   * Steps the models of one account may take for one event, about 10 ms: a hundred models of ten
   * ordinary tests each over short fields use a few percent of it.
   */
  eventSteps: 1_000_000,
  /**
   * Steps the models of one account may take for all the events of one request together, about
   * 20 ms: a batch of a hundred events gets twice one event's budget, not a hundred times, so no
   * request holds the thread for more than that whatever its size.
   */
  requestSteps: 2_000_000,
  /**
   * Milliseconds a request's models run before the evaluation gives other requests their turn
   * (between two events): about what one ordinary event's whole pipeline takes.
   */
  sliceMs: 2,
});

/**
 * Counts the work of one event's evaluation for one account. A plain mutable object read and
 * written by the compiled tests: charging costs a comparison and a subtraction, and nothing is
 * allocated per test.
 */
export class WorkMeter {
  /** Steps still allowed for this event. */
  left: number;
  /** Steps asked for, refused ones included: which model asked most is the one to blame. */
  asked = 0;
  /** Tests not run because they would have overrun. */
  refused = 0;
  /** Set by the first refusal; every later test of the event is refused too. */
  exhausted = false;

  constructor(
    readonly callSteps: number = EVALUATION_BUDGET.callSteps,
    readonly eventSteps: number = EVALUATION_BUDGET.eventSteps,
  ) {
    this.left = this.granted = eventSteps;
  }

  /** Answers whether a test of `steps` may run, and counts it; false leaves the test unrun. */
  charge(steps: number): boolean {
    this.asked += steps;
    if (this.exhausted || steps > this.callSteps || steps > this.left) {
      this.exhausted = true;
      this.refused++;
      return false;
    }
    this.left -= steps;
    return true;
  }

  /**
   * Charges work made of many small tests charged together (the type tests of every model), to
   * which only the event's budget applies.
   */
  spend(steps: number): boolean {
    this.asked += steps;
    if (this.exhausted || steps > this.left) {
      this.exhausted = true;
      this.refused++;
      return false;
    }
    this.left -= steps;
    return true;
  }

  /** Steps this event was given (what `left` started from). */
  granted: number;

  /** A fresh budget for the next event: the whole of it, or what its request has left if less. */
  reset(requestLeft: number = this.eventSteps): void {
    this.left = this.granted = Math.min(this.eventSteps, requestLeft);
    this.asked = 0;
    this.refused = 0;
    this.exhausted = false;
  }
}

/** When an account's models are over budget for long enough that one of them is suspended. */
export interface SuspensionPolicy {
  /** Evidence older than this is forgotten (the window starts over). */
  readonly windowMs: number;
  /** Events evaluated in the window before any decision. */
  readonly minEvents: number;
  /** Requests in the window whose own events were over budget on average: one batch, however large or hostile, is never enough. */
  readonly minRequests: number;
  /** Average model time per event, over the window, above which the heaviest model is suspended. */
  readonly eventMicros: number;
  /** What an event whose work budget ran out counts as, in model time, toward that average. */
  readonly exhaustedEventMicros: number;
}

export const SUSPENSION_POLICY: SuspensionPolicy = Object.freeze({
  /** Long enough to tell a sustained cost from a burst, short enough to act within a minute. */
  windowMs: 60_000,
  /**
   * Fifty events, and ten requests each over budget by itself: a single event, or a single batch,
   * from a browser holding the publishable key cannot switch a customer's detection off, whatever
   * ordinary traffic follows it; a sustained cost does.
   */
  minEvents: 50,
  minRequests: 10,
  /**
   * A millisecond per event is several times what a hundred models of ordinary shapes cost
   * (docs/internals/performance.md), and at that rate one account's models alone hold a core to a thousand
   * events a second.
   */
  eventMicros: 1_000,
  /**
   * The time the per-event budget stands for (EVALUATION_BUDGET.eventSteps at about 10 ns a step):
   * the refused test would have cost at least what was left of it. Ten times eventMicros, so an
   * account whose events run out of budget more often than one time in ten is over the average.
   */
  exhaustedEventMicros: 10_000,
});
