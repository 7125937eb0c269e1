/**
 * The composition root of the ingestion pipeline: every stage is built here, from the backends the
 * service opened (store, limiter, quota, catalog, enrichment, detection state), and nowhere else.
 * ingest-pipeline.ts fixes their order.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { StateStore } from '../detection/state/state-store.js';
import type { ModelCostWatch } from '../threat-models/cost-watch.js';
import type { ThreatModelRegistry } from '../threat-models/registry.js';
import { createThreatModelStage } from '../threat-models/stage.js';
import type { QuotaCounter, RateLimiter } from '../limits/types.js';
import type { Store } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import { createClassifyStage } from './classify.js';
import { CommitGroup, type CommitGroupOptions } from './commit-group.js';
import { createDedupeStage } from './dedupe.js';
import { createDetectStage } from './detect.js';
import { createEnrichStage, type EnrichStage } from './enrich.js';
import { createIngestPipeline, type IngestHooks, type IngestPipeline, type IngestStages } from './ingest-pipeline.js';
import { createLimitStage } from './limit.js';
import { createQuotaStage } from './quota.js';
import { createScoreStage } from './score.js';
import { createStoreStage } from './store.js';
import { validateRequest } from './validate.js';

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
}

/** Every stage, built from the backends; `commits` batches the store stage's transactions. */
export function composeStages(backends: PipelineBackends, commits: CommitGroup): IngestStages {
  return {
    validate: validateRequest,
    limit: createLimitStage(backends.limiter),
    dedupe: createDedupeStage(backends.store),
    quota: createQuotaStage(backends.quota),
    classify: createClassifyStage(backends.catalog),
    enrich: createEnrichStage(backends.enrichment),
    detect: createDetectStage({
      state: backends.state,
      clock: backends.clock,
      threatModels:
        backends.threatModels &&
        createThreatModelStage({
          state: backends.state,
          clock: backends.clock,
          registry: backends.threatModels,
          ...(backends.threatModelCosts ? { costs: backends.threatModelCosts } : {}),
        }),
    }),
    score: createScoreStage(),
    store: createStoreStage(commits),
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
  options: { commits: CommitGroupOptions; hooks?: Omit<IngestHooks, 'clock'> },
): ComposedPipeline {
  const commits = new CommitGroup(backends.store, options.commits);
  const stages = composeStages(backends, commits);
  return { pipeline: createIngestPipeline(stages, { clock: backends.clock, ...options.hooks }), stages, commits };
}
