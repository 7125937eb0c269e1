/**
 * The composition root of the ingestion pipeline: every stage is built here, from the backends the
 * service opened (store, limiter, quota, catalog, enrichment, detection state, threat models), and
 * nowhere else; `inOrder` fixes the order they run in, and says why.
 *
 * Authentication and the per-IP cap run earlier, in the HTTP layer (src/http/guards.ts), because
 * they apply to every /v1 request, including ones whose body is never read.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { StateStore } from '../detection/state/state-store.js';
import type { ModelCostWatch } from '../threat-models/cost-watch.js';
import type { ThreatModelRegistry } from '../threat-models/registry.js';
import { createThreatModelStage } from '../threat-models/stage.js';
import type { QuotaCounter, RateLimiter } from '../limits/types.js';
import type { Store } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import { classifyStage, createClassifyStage } from './classify.js';
import { CommitGroup, type CommitGroupOptions } from './commit-group.js';
import { checkEventIds, dedupeStage } from './dedupe.js';
import { createDetectStage, detectStage } from './detect.js';
import { enrichStage, type EnrichStage } from './enrich.js';
import { createIngestPipeline, type IngestHooks, type IngestPipeline } from './ingest-pipeline.js';
import { keyWindows, limitStage } from './limit.js';
import { lookUpStage, modelStage } from './model.js';
import type { Answered } from './outcome.js';
import { quotaStage, reserveIn } from './quota.js';
import type { Classified, Deduplicated, Detected, Enriched, Limited, LookedUp, Modelled, Received, Reserved, Scored, Screened, Validated } from './request.js';
import { createScoreStage, scoreStage } from './score.js';
import { StageList, type Stage } from './stage.js';
import { commitIn, storeStage } from './store.js';
import type { LiveFeed } from '../storage/live-feed.js';
import { validateStage } from './validate.js';
import { minimiseStage } from './minimise.js';
import { PseudonymKeys } from '../privacy/pseudonym.js';
import type { SuppressionList } from '../privacy/suppression.js';
import { suppressStage } from './suppress.js';

const NO_PSEUDONYMS = new PseudonymKeys(undefined);

/** What the stages run on. */
export interface PipelineBackends {
  readonly store: Store;
  readonly limiter: RateLimiter;
  readonly quota: QuotaCounter;
  readonly catalog: Catalog;
  readonly enrichment: { readonly enrich: EnrichStage };
  /** Window state shared by the detectors: in memory embedded, Redis when scaled out. */
  readonly state: StateStore;
  /** Customers' own threat models, evaluated after the built-in detectors on the same state. */
  readonly threatModels?: ThreatModelRegistry;
  /** What the threat models cost per account; suspends the heaviest model of an account over budget. */
  readonly threatModelCosts?: ModelCostWatch;
  readonly clock: Clock;
  /** The account's open live streams, told what each commit stored. */
  readonly live?: LiveFeed;
  /** The accounts' pseudonym keys (from VIGIL_PSEUDONYM_SECRET); without them no pseudonym is made. */
  readonly pseudonyms?: PseudonymKeys;
  /** The accounts' suppression lists (erased subjects whose events are not kept); none: nothing is suppressed. */
  readonly suppressions?: SuppressionList;
}

/** What the stages report to the service, besides the events' outcomes. */
export interface StageHooks {
  /** One unknown field in an accepted request, by family (the field it most likely meant, or `unrecognised`). */
  readonly onUnknownField?: (family: string) => void;
  /** True while shared state is unreachable and local fallbacks serve limits and detection. */
  readonly degraded?: () => boolean;
}

/** Every stage, by name: the request's type after each is in request.ts. */
export interface IngestStages {
  readonly validate: Stage<Received, Validated>;
  readonly limit: Stage<Validated, Limited>;
  readonly dedupe: Stage<Limited, Deduplicated>;
  readonly suppress: Stage<Deduplicated, Screened>;
  readonly quota: Stage<Screened, Reserved>;
  readonly classify: Stage<Reserved, Classified>;
  readonly enrich: Stage<Classified, Enriched>;
  readonly minimise: Stage<Enriched, Enriched>;
  readonly lookUp: Stage<Enriched, LookedUp>;
  readonly detect: Stage<LookedUp, Detected>;
  readonly model: Stage<Detected, Modelled>;
  readonly score: Stage<Modelled, Scored>;
  readonly store: Stage<Scored, Answered>;
}

/** The order the stages run in, and why each stands where it does. */
export function inOrder(s: IngestStages): StageList<Received, Answered> {
  return (
    StageList.of(s.validate) // cheapest; a bad request consumes no events (one request of the key's per-second window)
      .and(s.limit) // the key's windows: a 429 is decided before any work
      .and(s.dedupe) // a repeated event_id answers with the first result; it must not reach the quota
      // An erased subject's events end before the quota, enrichment, detection and storage (none is
      // spent on them, no state learns them), and are matched on the identifiers as validated: the
      // values an erasure names, before minimise truncates or replaces them.
      .and(s.suppress)
      .and(s.quota) // accept or drop before enrichment and detection are spent on an event
      .and(s.classify) // catalog lookup: base score, inferred types, and which detectors may fire
      .and(s.enrich) // GeoIP, ASN, threat intel, user agent, email, password, request scan
      .and(s.minimise) // after enrich (geo, ASN and feeds read the address as sent), before detect: state, alerts and rows never hold what the account minimises
      .and(s.lookUp) // the account's threat models, asked before detect: a remote state store answers with detect's first batch
      .and(s.detect) // needs enrichment (locations, feeds) and updates shared window state
      .and(s.model) // threat models on the same state after the built-in detectors; their alerts feed the score
      .and(s.score) // needs every alert
      // group commit; the 202 is sent only after the event's transaction committed
      .and(s.store)
  );
}

/** Every stage, built from the backends; `commits` batches the store stage's transactions. */
export function composeStages(backends: PipelineBackends, commits: CommitGroup, hooks: StageHooks = {}): IngestStages {
  const windows = keyWindows(backends.limiter);
  const threatModels =
    backends.threatModels &&
    createThreatModelStage({
      state: backends.state,
      clock: backends.clock,
      registry: backends.threatModels,
      ...(backends.threatModelCosts ? { costs: backends.threatModelCosts } : {}),
    });
  return {
    validate: validateStage(windows, hooks.onUnknownField),
    limit: limitStage(windows),
    dedupe: dedupeStage(checkEventIds(backends.store.events)),
    suppress: suppressStage(backends.suppressions),
    quota: quotaStage(reserveIn(backends.quota)),
    classify: classifyStage(createClassifyStage(backends.catalog)),
    enrich: enrichStage(backends.enrichment.enrich),
    minimise: minimiseStage(backends.pseudonyms ?? NO_PSEUDONYMS),
    lookUp: lookUpStage(threatModels),
    detect: detectStage(createDetectStage({ state: backends.state, clock: backends.clock })),
    model: modelStage(threatModels),
    score: scoreStage(createScoreStage()),
    store: storeStage(commitIn(commits, backends.live), hooks.degraded),
  };
}

export interface ComposedPipeline {
  readonly pipeline: IngestPipeline;
  readonly stages: IngestStages;
  /** Flushed on shutdown: the last group commits before the process exits. */
  readonly commits: CommitGroup;
}

export function composeIngestPipeline(
  backends: PipelineBackends,
  options: { commits: CommitGroupOptions; hooks?: Omit<IngestHooks, 'clock'> & StageHooks },
): ComposedPipeline {
  const commits = new CommitGroup(backends.store, options.commits);
  const stages = composeStages(backends, commits, options.hooks);
  return { pipeline: createIngestPipeline(inOrder(stages), { clock: backends.clock, onEvents: options.hooks?.onEvents }), stages, commits };
}
