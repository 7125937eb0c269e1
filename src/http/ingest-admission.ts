/**
 * Admission of ingestion requests into the pipeline, by the body bytes in flight (as each
 * request's Content-Length announces them).
 *
 * A request that has been admitted has its body read, parsed, validated, enriched, detected and
 * scored, and its objects live until its response is done. When clients send faster than the
 * process can ingest (many connections, or batches), every waiting request would otherwise be
 * read and processed at once and wait for its commit fully built: that live set outgrows V8's
 * young generation, survives into the old one and makes every major GC mark it. Past the budget,
 * requests wait here before their body is read (routes/ingest.ts admits them in preParsing): the
 * body stays in the connection's buffers, outside the JavaScript heap, and Node stops reading
 * the socket once its stream buffer is full. They wait first come first served and enter as
 * earlier ones finish. A request alone in flight is always admitted, whatever its size, so no
 * body that the size limits accept waits forever.
 */
export class IngestAdmission {
  private inFlight = 0;
  private readonly waiting: { readonly bytes: number; readonly enter: () => void }[] = [];
  private head = 0;

  constructor(readonly budgetBytes: number) {}

  /** Bytes of admitted bodies whose requests have not finished. */
  get bytesInFlight(): number {
    return this.inFlight;
  }

  /** Requests waiting for admission. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /**
   * Admits a body of `bytes`: undefined when it enters at once (no promise on the common path),
   * otherwise a promise that resolves when it does. Every admission is paired with one `leave`.
   */
  enter(bytes: number): Promise<void> | undefined {
    if (this.queued === 0 && (this.inFlight === 0 || this.inFlight + bytes <= this.budgetBytes)) {
      this.inFlight += bytes;
      return undefined;
    }
    return new Promise<void>((enter) => this.waiting.push({ bytes, enter }));
  }

  /** The request of an admitted body has finished (answered or failed): the next ones may enter. */
  leave(bytes: number): void {
    this.inFlight -= bytes;
    while (this.head < this.waiting.length) {
      const next = this.waiting[this.head] as (typeof this.waiting)[number];
      if (this.inFlight > 0 && this.inFlight + next.bytes > this.budgetBytes) break;
      this.head++;
      this.inFlight += next.bytes;
      next.enter();
    }
    // The queue is an array read from `head`, so entering costs no shift; the entered part is
    // dropped once it is half of the array.
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
  }
}
