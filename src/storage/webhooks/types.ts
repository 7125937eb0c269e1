import type { Severity } from '../../event/classification.js';

export const WEBHOOK_FORMATS = ['vigil', 'ocsf', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export const SEVERITIES: readonly Severity[] = ['low', 'medium', 'high', 'critical'];

/** Why a delivery exists: an alert was opened, escalated (severity or chain stages) or changed status, or the account asked for a test. */
export type DeliveryEvent = 'alert.opened' | 'alert.escalated' | 'alert.status_changed' | 'webhook.test';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** Which alerts an endpoint receives. */
export interface EndpointFilter {
  readonly minSeverity: Severity;
  /** Globs over alert types (`*` matches any run of characters); empty: every type. */
  readonly alertTypes: readonly string[];
  readonly killChainsOnly: boolean;
}

export interface WebhookEndpoint extends EndpointFilter {
  readonly id: string;
  readonly accountId: string;
  readonly url: string;
  readonly description: string;
  readonly format: WebhookFormat;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  readonly secret: string;
  /** The secret before the last rotation, still signing until previousSecretUntil. */
  readonly previousSecret: string | null;
  readonly previousSecretUntil: number | null;
  /** Start of the current run of failed attempts; null after a success. */
  readonly failingSince: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface WebhookDelivery {
  readonly id: string;
  readonly accountId: string;
  readonly endpointId: string;
  readonly alertId: string | null;
  readonly event: DeliveryEvent;
  /** The alert as it was when the change was committed (AlertRow). */
  readonly alert: Readonly<Record<string, unknown>>;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly lastAttemptAt: number | null;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly createdAt: number;
  readonly finishedAt: number | null;
}
