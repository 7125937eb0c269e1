import { VigilClient, VigilError, type ClientOptions, type ClientStats } from '@vigil/client-core';

export interface BrowserClientOptions extends ClientOptions {
  /** Send what the buffer holds with `navigator.sendBeacon` when the page is hidden or left. Default true. */
  beaconOnHide?: boolean;
}

export interface BrowserClientStats extends ClientStats {
  /** Events handed to `navigator.sendBeacon` on page hide (their answer is never seen). */
  readonly beaconed: number;
}

/**
 * The Vigil client for browsers. It takes a publishable key only (`vgl_pk_…`, allowed for
 * the page's origin); buffers events by default and sends them in batches, and hands what is
 * left to `navigator.sendBeacon` when the page is hidden, so the last events of a visit are
 * not lost. Same delivery, pacing, retry and 429 rules as the Node client. A page cannot set
 * `User-Agent`: the service gives the events the browser's own.
 */
export class Vigil extends VigilClient {
  private readonly apiKey: string;
  private beaconed = 0;

  constructor(options: BrowserClientOptions) {
    if (typeof options?.apiKey !== 'string' || !options.apiKey.startsWith('vgl_pk_'))
      throw new Error('Vigil: the browser client needs a publishable key (vgl_pk_...). A secret key (vgl_sk_...) must never be shipped to a browser.');
    super({ mode: 'buffered', ...options });
    this.apiKey = options.apiKey;
    if (options.beaconOnHide !== false && typeof document !== 'undefined') {
      const hide = () => this.sendBeacon();
      document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && hide());
      addEventListener('pagehide', hide);
    }
  }

  /** Hands the buffer to `navigator.sendBeacon` (the page may be gone before a fetch answers). */
  sendBeacon(): void {
    try {
      for (const request of this.drainRequests()) {
        const handed = navigator.sendBeacon(`${request.url}?api_key=${encodeURIComponent(this.apiKey)}`, request.body);
        if (handed) this.beaconed += request.count;
        else {
          this.counts.failed += request.count;
          this.report(new VigilError('failed', null, request.count));
        }
      }
    } catch {
      // A page going away must never see an error from its analytics.
    }
  }

  override stats(): BrowserClientStats {
    return { ...super.stats(), beaconed: this.beaconed };
  }
}

/** The former name of `Vigil`, kept so that existing pages go on working. */
export const VigilBrowser = Vigil;

export { VigilError } from '@vigil/client-core';
export type { BatchResult, ClientStats, Clock, CloseOptions, Outcome, RiskContribution, RiskDecision, TrackResult, VigilEvent } from '@vigil/client-core';
