import type { SessionStore } from '../store.js';
import type { DashboardSession } from '../types.js';
import { num, type KyselyAccess } from './access.js';

/** Dashboard sessions over Kysely. */
export class KyselySessionStore implements SessionStore {
  constructor(private readonly x: KyselyAccess) {}

  async createDashboardSession(session: DashboardSession): Promise<void> {
    await this.x.guard('createDashboardSession', () =>
      this.x.db
        .insertInto('dashboard_sessions')
        .values({
          id_hash: session.idHash,
          account_id: session.accountId,
          key_id: session.keyId,
          csrf_token: session.csrfToken,
          created_at: session.createdAt,
          expires_at: session.expiresAt,
        })
        .execute(),
    );
  }

  async findDashboardSession(idHash: string, now: number): Promise<{ session: DashboardSession; keyHash: string } | undefined> {
    if (this.x.unmatchable(idHash)) return undefined;
    const row = await this.x.read('findDashboardSession', () =>
      this.x.db
        .selectFrom('dashboard_sessions as s')
        .innerJoin('api_keys as k', (j) => j.onRef('k.id', '=', 's.key_id').onRef('k.account_id', '=', 's.account_id'))
        .selectAll('s')
        .select('k.hash as key_hash')
        .where('s.id_hash', '=', idHash)
        .where('s.expires_at', '>', now)
        .executeTakeFirst(),
    );
    if (!row) return undefined;
    return {
      session: {
        idHash: row.id_hash,
        accountId: row.account_id,
        keyId: row.key_id,
        csrfToken: row.csrf_token,
        createdAt: num(row.created_at),
        expiresAt: num(row.expires_at),
      },
      keyHash: row.key_hash,
    };
  }

  async deleteDashboardSession(idHash: string, now: number): Promise<void> {
    await this.x.guard('deleteDashboardSession', () =>
      this.x.db
        .deleteFrom('dashboard_sessions')
        .where((eb) => eb.or([eb('id_hash', '=', idHash), eb('expires_at', '<=', now)]))
        .execute(),
    );
  }
}
