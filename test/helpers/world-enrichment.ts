import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnrichment, type EnrichmentService } from '../../src/enrichment/index.js';

export interface WorldEnrichment {
  readonly service: EnrichmentService;
  /** The copy of the fixture feeds; a test may write to it and reload. */
  readonly feedsDir: string;
  /** Closes the service and removes the copy. */
  close(): Promise<void>;
}

/**
 * Enrichment on the shipped GeoIP and ASN data (the world, not the test fixture) and a copy of the
 * fixture threat-intel feeds in a temporary folder, for tests about what enrichment finds.
 */
export async function worldEnrichment(): Promise<WorldEnrichment> {
  const feedsDir = await mkdtemp(join(tmpdir(), 'vigil-test-feeds-'));
  await cp(new URL('../fixtures/feeds/', import.meta.url).pathname, feedsDir, { recursive: true });
  const service = await createEnrichment({ feedsDir, logger: { warn: () => undefined, info: () => undefined }, watchFeeds: false });
  return {
    service,
    feedsDir,
    async close() {
      await service.close();
      await rm(feedsDir, { recursive: true, force: true });
    },
  };
}
