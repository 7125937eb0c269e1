import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as threatModels from './002-threat-models.js';
import * as webhooks from './003-webhooks.js';
import * as dashboardSessions from './004-dashboard-sessions.js';
import * as idempotencyDigest from './005-idempotency-digest.js';
import * as eventHours from './006-event-hours.js';
import * as threatModelSuspension from './007-threat-model-suspension.js';
import * as teams from './008-teams.js';
import * as search from './009-search.js';
import * as searchText from './010-search-text.js';
import * as subjects from './011-subjects.js';

/** The one migration set, shared by SQLite and PostgreSQL; listed statically so builds need no file scanning. */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      '001-initial': initial,
      '002-threat-models': threatModels,
      '003-webhooks': webhooks,
      '004-dashboard-sessions': dashboardSessions,
      '005-idempotency-digest': idempotencyDigest,
      '006-event-hours': eventHours,
      '007-threat-model-suspension': threatModelSuspension,
      '008-teams': teams,
      '009-search': search,
      '010-search-text': searchText,
      '011-subjects': subjects,
    };
  },
};
