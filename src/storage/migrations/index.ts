import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as dashboardSessions from './004-dashboard-sessions.js';

/** The one migration set, shared by SQLite and PostgreSQL; listed statically so builds need no file scanning. */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { '001-initial': initial, '004-dashboard-sessions': dashboardSessions };
  },
};
