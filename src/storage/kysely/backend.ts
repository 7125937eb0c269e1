import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { EntityStore, EventStore } from '../store.js';
import { KyselyAccess, type KyselyAccessOptions } from './access.js';
import { KyselyAccountStore } from './accounts.js';
import { KyselyAlertStore } from './alerts.js';
import { KyselyAuditStore } from './audit.js';
import { KyselyMemberStore } from './members.js';
import { KyselySessionStore } from './sessions.js';
import { KyselyStatsStore } from './stats.js';
import { KyselySubjectStore } from './subjects.js';
import { KyselyThreatModelStore } from './threat-models.js';
import { KyselyWebhookStore } from './webhooks.js';

/**
 * The aggregate stores a Kysely backend composes over its connection. The backend adds its
 * events store (the one aggregate whose SQL differs between databases), the commit executor,
 * migrations and upkeep.
 */
export abstract class KyselyBackend {
  abstract readonly events: EventStore;
  abstract readonly entities: EntityStore;
  readonly accounts: KyselyAccountStore;
  readonly alerts: KyselyAlertStore;
  readonly stats: KyselyStatsStore;
  readonly sessions: KyselySessionStore;
  readonly threatModels: KyselyThreatModelStore;
  readonly webhooks: KyselyWebhookStore;
  readonly members: KyselyMemberStore;
  readonly audit: KyselyAuditStore;
  readonly subjects: KyselySubjectStore;
  protected readonly x: KyselyAccess;

  constructor(
    protected readonly db: Kysely<Database>,
    kind: 'sqlite' | 'postgres',
    options: KyselyAccessOptions = {},
  ) {
    this.x = new KyselyAccess(db, kind, options);
    this.accounts = new KyselyAccountStore(this.x);
    this.alerts = new KyselyAlertStore(this.x);
    this.stats = new KyselyStatsStore(this.x);
    this.sessions = new KyselySessionStore(this.x);
    this.threatModels = new KyselyThreatModelStore(this.x);
    this.webhooks = new KyselyWebhookStore(this.x);
    this.members = new KyselyMemberStore(this.x);
    this.audit = new KyselyAuditStore(this.x);
    this.subjects = new KyselySubjectStore(this.x);
  }

  async ping(): Promise<void> {
    await this.x.read('ping', () => sql`select 1`.execute(this.db));
  }
}
