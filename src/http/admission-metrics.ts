import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { IngestAdmission, type AdmissionLimits, type OverloadReason } from './ingest-admission.js';

/**
 * The ingestion admission of an app with its metrics: requests waiting and in flight, how long
 * those that waited waited, the requests refused (503 OVERLOADED) by reason, and whether the
 * instance is refusing now.
 */
export function measuredAdmission(registry: Registry, limits: AdmissionLimits): { admission: IngestAdmission; onOverloaded: (reason: OverloadReason) => void } {
  const waited = new Histogram({
    name: 'vigil_ingest_admission_wait_seconds',
    help: 'How long ingestion requests that had to wait for admission waited (requests that entered at once are not counted)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const admission = new IngestAdmission(limits, { onWaited: (seconds) => waited.observe(seconds) });
  const rejected = new Counter({
    name: 'vigil_admission_rejected_total',
    help: 'Ingestion requests answered 503 OVERLOADED: VIGIL_INGEST_MAX_WAITING requests were waiting (waiting_full), the account held its share of them (account_share), or the wait would pass VIGIL_INGEST_MAX_WAIT_MS (wait_too_long)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const byReason: Record<OverloadReason, Counter.Internal> = {
    waiting_full: rejected.labels('waiting_full'),
    account_share: rejected.labels('account_share'),
    wait_too_long: rejected.labels('wait_too_long'),
  };
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  gauge(
    'vigil_ingest_admission_waiting',
    'Ingestion requests waiting to enter the pipeline: the body bytes in flight have reached VIGIL_INGEST_IN_FLIGHT_BYTES',
    () => admission.queued,
  );
  gauge('vigil_ingest_admission_in_flight', 'Ingestion requests admitted into the pipeline and not yet answered', () => admission.inFlightRequests);
  gauge(
    'vigil_ingest_admission_in_flight_bytes',
    'Body bytes of the ingestion requests in flight (against VIGIL_INGEST_IN_FLIGHT_BYTES)',
    () => admission.bytesInFlight,
  );
  gauge('vigil_ingest_overloaded', '1 while ingestion requests are being answered 503 OVERLOADED (one within the last second)', () =>
    admission.overloaded ? 1 : 0,
  );
  return { admission, onOverloaded: (reason) => byReason[reason].inc() };
}
