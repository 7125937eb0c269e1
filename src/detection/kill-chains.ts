/**
 * The five kill chains as ordered stage sequences per actor or host. A stage is met
 * by the event's type (known before any state is read), by alerts this event raised, or by a
 * burst counted in state. Type stages are marked in the first batch; alert and burst stages, and
 * the type stages after them, in the second; so most events need one round trip.
 */
import { DETECTOR_FAMILIES, type Severity } from '../event/classification.js';
import { HOUR_MS, MINUTE_MS } from '../util/duration.js';
import type { AlertDecl, Answers, DetectContext, Declaration, OpBatch, Raised, Slot, ThresholdDecl, ThresholdValues } from './detector.js';
import { SENSITIVE_CHANGE_TYPES } from './detectors/account-takeover-signals.js';
import { isExport } from './detectors/bulk-export.js';
import { isRoleChange } from './detectors/session-anomaly.js';
import type { EventFacts } from './facts.js';
import type { CompiledSettings } from './settings.js';
import type { SequenceResult, SequenceStep, WindowResult } from './state/state-store.js';

interface StageDecl {
  readonly name: string;
  readonly description: string;
  /** Met by the event itself. */
  readonly when?: (f: EventFacts) => boolean;
  /** Met when this event raised one of these alerts. */
  readonly alerts?: ReadonlySet<string>;
  /** Met when this event is a successful login and raised one of these alerts (a risky login). */
  readonly loginAlerts?: ReadonlySet<string>;
  /** Met when the actor's data accesses reach the access_burst threshold. */
  readonly burst?: boolean;
  /** Only by an event after the one that met the stage before it (one export is not two steps). */
  readonly laterEvent?: boolean;
}

/** A kill chain: the alert it raises, the subject it follows, its window and its ordered stages. */
interface ChainDecl {
  readonly type: string;
  readonly subject: 'actor' | 'host';
  readonly windowMs: number;
  readonly severity: Severity;
  readonly mitre: readonly string[];
  readonly description: string;
  readonly stages: readonly StageDecl[];
}

const set = (...xs: string[]): ReadonlySet<string> => new Set(xs);
const types = (...xs: string[]) => {
  const s = new Set(xs);
  return (f: EventFacts) => s.has(f.type);
};
const RISKY_LOGIN_ALERTS = set(
  'auth.new_country',
  'auth.new_device',
  'auth.impossible_travel',
  'network.tor_exit_node',
  'network.blocklisted_ip',
  'auth.credential_stuffing_success',
  'auth.login_after_failures',
);
const CREDENTIAL_ATTACK_ALERTS = set(
  'auth.brute_force.account',
  'auth.brute_force.ip',
  'auth.credential_spray',
  'auth.distributed_brute_force',
  'auth.credential_stuffing_success',
  'network.tor_exit_node',
  'network.blocklisted_ip',
  'auth.new_country',
  'auth.impossible_travel',
  'auth.login_after_failures',
  'auth.mfa_fatigue_accepted',
);
const COMPROMISE_ALERTS = set(
  'host.ssh_login_after_failures',
  'host.suspicious_process',
  'host.persistence',
  'host.sensitive_file_change',
  'host.container_escape',
);
const ACCESS_BURST_WINDOW_MS = 10 * MINUTE_MS;

const CHAINS: readonly ChainDecl[] = [
  {
    type: 'chain.account_takeover',
    subject: 'actor',
    windowMs: HOUR_MS,
    severity: 'critical',
    mitre: ['T1110', 'T1078', 'T1098'],
    description:
      'Kill chain: a credential attack or risky login, then a successful login, then a sensitive account change (MFA, email, phone or password) within an hour. The account is very probably taken over.',
    stages: [
      {
        name: 'credential_attack_or_risky_login',
        description:
          'Brute force, spray, distributed or stuffing attack on the actor, or a login from Tor, a blocklisted address, a new country or impossible travel.',
        alerts: CREDENTIAL_ATTACK_ALERTS,
      },
      { name: 'login_success', description: 'A successful login of the actor.', when: (f) => f.loginSuccess },
      {
        name: 'sensitive_change',
        description: 'MFA disabled, email, phone or password changed.',
        when: (f) => SENSITIVE_CHANGE_TYPES.has(f.type) && f.type !== 'auth.mfa.enabled',
      },
    ],
  },
  {
    type: 'chain.privilege_escalation',
    subject: 'actor',
    windowMs: HOUR_MS,
    severity: 'critical',
    mitre: ['T1078', 'T1098'],
    description:
      'Kill chain: a risky login, then a role change or impersonation, then an administrative change (configuration, API key, new user) within an hour.',
    stages: [
      {
        name: 'risky_login',
        description: 'A successful login that raised a risk alert (new country or device, impossible travel, Tor, blocklisted address, stuffing).',
        loginAlerts: RISKY_LOGIN_ALERTS,
      },
      {
        name: 'role_change_or_impersonation',
        description: 'A role or permission change, or impersonation.',
        when: (f) => isRoleChange(f) || f.type === 'admin.user.impersonated',
      },
      {
        name: 'admin_change',
        description: 'Configuration or settings changed, an API key or a user created, a role created.',
        when: types(
          'admin.config.changed',
          'admin.settings.updated',
          'admin.api_key.created',
          'admin.user.created',
          'admin.role.created',
          'admin.integration.added',
        ),
      },
    ],
  },
  {
    type: 'chain.data_exfiltration',
    subject: 'actor',
    windowMs: HOUR_MS,
    severity: 'critical',
    mitre: ['T1078', 'T1530', 'T1567'],
    description: 'Kill chain: a risky login or privilege change, then a burst of data access, then a bulk export or download within an hour.',
    stages: [
      {
        name: 'risky_login_or_privilege_change',
        description: 'A risky login, or a role or permission change.',
        loginAlerts: RISKY_LOGIN_ALERTS,
        when: isRoleChange,
        alerts: set('privilege.escalation'),
      },
      {
        name: 'data_access_burst',
        description: 'Data accesses reaching the access_burst threshold within 10 minutes, or a large export (data.bulk_export).',
        burst: true,
        alerts: set('data.bulk_export'),
      },
      { name: 'bulk_export', description: 'An export or download in a later event.', when: isExport, laterEvent: true },
    ],
  },
  {
    type: 'chain.host_compromise',
    subject: 'host',
    windowMs: 2 * HOUR_MS,
    severity: 'critical',
    mitre: ['T1110.001', 'T1021.004', 'T1548.003', 'T1053.003'],
    description:
      'Kill chain on one host: SSH brute force, a login from the same address, privilege use (sudo, su, new user), then persistence or a suspicious process within two hours.',
    stages: [
      { name: 'ssh_brute_force', description: 'SSH brute force against the host.', alerts: set('host.ssh_brute_force') },
      { name: 'ssh_login_same_ip', description: 'An SSH login from an address that was brute-forcing the host.', alerts: set('host.ssh_login_after_failures') },
      {
        name: 'privilege_use',
        description: 'sudo, su or a user created on the host.',
        when: types('server.user.sudo', 'server.user.su', 'server.user.created'),
      },
      {
        name: 'persistence_or_suspicious_process',
        description: 'Persistence added or a suspicious process run on the host.',
        alerts: set('host.persistence', 'host.suspicious_process'),
      },
    ],
  },
  {
    type: 'chain.cover_tracks',
    subject: 'host',
    windowMs: HOUR_MS,
    severity: 'critical',
    mitre: ['T1070.002', 'T1562.004'],
    description: 'Kill chain on one host: a compromise indicator followed within an hour by cleared or tampered logs or a removed firewall rule.',
    stages: [
      {
        name: 'compromise_indicator',
        description:
          'A host alert that indicates compromise (login after brute force, suspicious process, persistence, sensitive file change, container escape, host compromise chain).',
        alerts: COMPROMISE_ALERTS,
      },
      {
        name: 'cover_tracks',
        description: 'Logs cleared or tampered, or a firewall rule removed.',
        when: types('server.log.cleared', 'server.log.tampered', 'server.firewall.rule_removed'),
      },
    ],
  },
];

/** The kill_chain detector: its declaration, with one alert type per chain, and the chains it follows. */
export interface KillChains<T extends string> extends Declaration<T, string> {
  readonly chains: readonly ChainDecl[];
  thresholdsIn(settings: CompiledSettings): ThresholdValues<T>;
}

function defineKillChains<const T extends string>(
  d: Omit<Declaration<T, never>, 'alerts'> & { readonly thresholds: { readonly [K in T]: ThresholdDecl }; readonly chains: readonly ChainDecl[] },
): KillChains<T> {
  const alerts: Record<string, AlertDecl> = Object.fromEntries(
    d.chains.map((c) => [c.type, { severity: c.severity, mitre: c.mitre, windowMs: c.windowMs, description: c.description }]),
  );
  return Object.assign({}, d, { alerts, thresholdsIn: (settings: CompiledSettings) => settings.thresholds(d.name) as ThresholdValues<T> });
}

export const killChain = defineKillChains({
  name: 'kill_chain',
  families: DETECTOR_FAMILIES,
  description: 'Follows the ordered stages of the five kill chains per actor or host within their windows.',
  thresholds: {
    access_burst: { default: 30, min: 2, max: 100_000, description: 'Data accesses by one actor within 10 minutes that make the "data access burst" stage.' },
  },
  chains: CHAINS,
});

interface Mark {
  readonly chain: ChainDecl;
  readonly stage: number;
  readonly slot: Slot<SequenceResult>;
}

/** One event's progress through the chains, between the batches. */
export class ChainRun {
  private readonly typeStages: { chain: ChainDecl; subject: string; stages: number[] }[] = [];
  private readonly firstMarks: Mark[] = [];
  private secondMarks: Mark[] = [];
  private burst: Slot<WindowResult> | undefined;

  constructor(
    private readonly ctx: DetectContext,
    private readonly t: ThresholdValues<'access_burst'>,
  ) {}

  /** First batch: marks for stages the event's type meets, and the access counter. */
  collect(): void {
    const f = this.ctx.facts;
    if (f.actor !== undefined && f.type === 'data.accessed') {
      this.burst = this.ctx.ops.add({
        kind: 'window.add',
        key: this.ctx.key('w', f.actorSubject),
        field: 'data_access',
        at: f.at,
        windowMs: ACCESS_BURST_WINDOW_MS,
      });
    }
    for (const { chain, stages } of typeStagesOf(f)) {
      const subject = subjectOf(chain, f);
      if (subject === undefined) continue;
      this.typeStages.push({ chain, subject, stages });
      for (const stage of stages) this.firstMarks.push(this.mark(this.ctx.ops, chain, subject, stage, []));
    }
  }

  /** Whether alerts or the access burst can meet a stage, so the second batch has chain work. */
  needsSecondBatch(answers: Answers, raisedAny: boolean): boolean {
    return raisedAny || (this.burst !== undefined && answers.get(this.burst).sum >= this.t.access_burst);
  }

  /** Second batch: stages met by this event's alerts or by the burst, then the type stages after them again. */
  afterJudges(answers: Answers, raised: readonly Raised[], batch: OpBatch): void {
    const f = this.ctx.facts;
    const burst = this.burst !== undefined && answers.get(this.burst).sum >= this.t.access_burst;
    for (const chain of CHAINS) {
      const subject = subjectOf(chain, f);
      if (subject === undefined) continue;
      const dynamic = new Map<number, string[]>();
      chain.stages.forEach((stage, i) => {
        const alerts = raised.filter((r) => stage.alerts?.has(r.type) || (f.loginSuccess && stage.loginAlerts?.has(r.type))).map((r) => r.type);
        if (alerts.length > 0 || (stage.burst && burst)) dynamic.set(i, alerts);
      });
      if (dynamic.size === 0) continue;
      const lowest = Math.min(...dynamic.keys());
      // A type stage after a newly met stage is marked again, now that its predecessor exists.
      for (const s of this.typeStages.find((x) => x.chain === chain)?.stages ?? [])
        if (s > lowest && !dynamic.has(s) && !(chain.stages[s]?.laterEvent === true && dynamic.has(s - 1))) dynamic.set(s, []);
      for (const stage of [...dynamic.keys()].sort((a, b) => a - b))
        this.secondMarks.push(this.mark(batch, chain, subject, stage, dynamic.get(stage) as string[]));
    }
  }

  /** Raises the chain alerts whose last stage was reached in the given batch's marks. */
  complete(answers: Answers, which: 'first' | 'second'): void {
    for (const m of which === 'first' ? this.firstMarks : this.secondMarks) {
      if (m.stage !== m.chain.stages.length - 1) continue;
      const steps = answers.get(m.slot).steps;
      if (steps === null) continue;
      const subject = subjectOf(m.chain, this.ctx.facts) as string;
      this.ctx.raise(m.chain.type, subject, { window_minutes: m.chain.windowMs / MINUTE_MS, stages: steps.map((s) => describeStep(m.chain, s)) });
    }
  }

  /** Whether a mark of the second batch can complete a chain (whose alert then needs a third batch). */
  get mayCompleteInSecond(): boolean {
    return this.secondMarks.some((m) => m.stage === m.chain.stages.length - 1);
  }

  get hasFirstMarks(): boolean {
    return this.firstMarks.length > 0;
  }

  private mark(batch: OpBatch, chain: ChainDecl, subject: string, stage: number, alerts: readonly string[]): Mark {
    const f = this.ctx.facts;
    const ref = { event_id: f.eventId ?? null, type: f.type, alerts: [...alerts] };
    const slot = batch.add({
      kind: 'sequence.mark',
      key: this.ctx.key('c', subject),
      field: chain.type,
      stage,
      at: f.at,
      windowMs: chain.windowMs,
      ref,
    });
    return { chain, stage, slot };
  }
}

/**
 * The stages each chain's type predicates meet for an event. They read only the type and the
 * inferred types, so the answer is kept per (type, inferred) pair; the table is bounded.
 */
const typeStageCache = new Map<string, readonly { chain: ChainDecl; stages: number[] }[]>();
const TYPE_STAGE_CACHE_MAX = 4096;

function typeStagesOf(f: EventFacts): readonly { chain: ChainDecl; stages: number[] }[] {
  const inferred = f.event.classification.inferred;
  const cacheKey = inferred.length === 0 ? f.type : `${f.type}|${inferred.join(',')}`;
  const hit = typeStageCache.get(cacheKey);
  if (hit !== undefined) return hit;
  const out: { chain: ChainDecl; stages: number[] }[] = [];
  for (const chain of CHAINS) {
    const stages: number[] = [];
    chain.stages.forEach((stage, i) => {
      if (stage.when?.(f)) stages.push(i);
    });
    if (stages.length > 0) out.push({ chain, stages });
  }
  if (typeStageCache.size >= TYPE_STAGE_CACHE_MAX) typeStageCache.clear();
  typeStageCache.set(cacheKey, out);
  return out;
}

function subjectOf(spec: ChainDecl, f: EventFacts): string | undefined {
  if (spec.subject === 'host') return f.host === undefined ? undefined : `host:${f.host}`;
  return f.actor === undefined ? undefined : f.actorSubject;
}

function describeStep(spec: ChainDecl, step: SequenceStep) {
  const ref = (step.ref ?? {}) as { event_id?: string | null; type?: string; alerts?: string[] };
  return {
    stage: spec.stages[step.stage]?.name ?? String(step.stage),
    at: new Date(step.at).toISOString(),
    event_id: ref.event_id ?? null,
    event_type: ref.type ?? null,
    alerts: ref.alerts ?? [],
  };
}
