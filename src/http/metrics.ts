import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Counts of one label combination made on the hot path and added to their prom-client counter
 * when the metrics are read: prom-client validates and hashes the labels on every `inc`, even
 * through a child, and a request adds one to two counters.
 */
interface Pending<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  count: number;
}

function flush<L extends string>(counter: Counter<L>, pending: Iterable<Pending<L>>): void {
  for (const entry of pending) {
    if (entry.count === 0) continue;
    counter.inc(entry.labels, entry.count);
    entry.count = 0;
  }
}

interface RequestSeries extends Pending<'route' | 'method' | 'status'> {
  readonly duration: { observe(seconds: number): void };
}

/** Prometheus metrics of one app instance (own registry, so tests can build many apps). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'vigil_' });
  const requestSeries: RequestSeries[] = [];
  const requests: Counter<'route' | 'method' | 'status'> = new Counter({
    name: 'vigil_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
    collect: () => flush(requests, requestSeries),
  });
  const requestDuration = new Histogram({
    name: 'vigil_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['route'],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const eventsByOutcome = new Map<string, Pending<'outcome'>>();
  const events: Counter<'outcome'> = new Counter({
    name: 'vigil_events_total',
    help: 'Events by outcome (accepted, dropped_quota, duplicate, rejected_*)',
    labelNames: ['outcome'],
    registers: [registry],
    collect: () => flush(events, eventsByOutcome.values()),
  });
  const commitDuration = new Histogram({
    name: 'vigil_commit_duration_seconds',
    help: 'Commit group transaction time',
    labelNames: ['ok'],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
    registers: [registry],
  });
  // A request's label values come from a small set (routes x methods x statuses): each
  // combination is looked up in nested maps of the strings Fastify already holds, with no key
  // string built per request.
  const series = new Map<string, Map<string, Map<number, RequestSeries>>>();
  const seriesFor = (route: string, method: string, status: number): RequestSeries => {
    let byMethod = series.get(route);
    if (byMethod === undefined) series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (found === undefined) {
      found = { labels: { route, method, status: String(status) }, count: 0, duration: requestDuration.labels({ route }) };
      byStatus.set(status, found);
      requestSeries.push(found);
    }
    return found;
  };
  return {
    registry,
    requests,
    requestDuration,
    /** One finished HTTP request. */
    recordRequest(route: string, method: string, status: number, seconds: number): void {
      const found = seriesFor(route, method, status);
      found.count++;
      found.duration.observe(seconds);
    },
    events,
    /** `n` events of one request with this outcome. */
    countEvents(outcome: string, n: number): void {
      let found = eventsByOutcome.get(outcome);
      if (found === undefined) eventsByOutcome.set(outcome, (found = { labels: { outcome }, count: 0 }));
      found.count += n;
    },
    unknownFields: new Counter({
      name: 'vigil_unknown_fields_total',
      help: 'Unknown event fields kept in metadata.extra, by the event field they most likely meant (unrecognised: none)',
      labelNames: ['family'],
      registers: [registry],
    }),
    commitGroupSize: new Histogram({
      name: 'vigil_commit_group_events',
      help: 'Events written per commit group',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000],
      registers: [registry],
    }),
    commitDuration,
    adminAuthFailures: new Counter({
      name: 'vigil_admin_auth_failures_total',
      help: 'Admin API requests refused: wrong or missing token (wrong_token), or refused unchecked past the failure limits (throttled)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    alerts: new Counter({
      name: 'vigil_alerts_total',
      help: 'Alerts raised (opened) or updated, by type',
      labelNames: ['type', 'opened'],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
