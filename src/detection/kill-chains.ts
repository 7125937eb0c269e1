/**
 * The five kill chains as ordered stage sequences per actor or host. A stage is met
 * by the event's type (known before any state is read), by alerts this event raised, or by a
 * burst counted in state. Type stages are marked in the first batch; alert and burst stages, and
 * the type stages after them, in the second; so most events need one round trip.
 */
import type { KillChainSpec } from '../event/classification.js';
import { MINUTE, th, type Answers, type DetectContext, type OpBatch, type Raised, type Slot, type Thresholds } from './detector.js';
import { SENSITIVE_CHANGE_TYPES } from './detectors/account-takeover-signals.js';
import { isExport } from './detectors/bulk-export.js';
import { isRoleChange } from './detectors/session-anomaly.js';
import type { EventFacts } from './facts.js';
import { KILL_CHAINS } from './specs.js';
import type { SequenceResult, SequenceStep, WindowResult } from './state/state-store.js';

interface StageDef {
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

interface ChainDef {
  readonly spec: KillChainSpec;
  readonly stages: readonly StageDef[];
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
const ACCESS_BURST_WINDOW_MS = 10 * MINUTE;

const DEFS: Readonly<Record<string, readonly StageDef[]>> = {
  'chain.account_takeover': [
    { alerts: CREDENTIAL_ATTACK_ALERTS },
    { when: (f) => f.loginSuccess },
    { when: (f) => SENSITIVE_CHANGE_TYPES.has(f.type) && f.type !== 'auth.mfa.enabled' },
  ],
  'chain.privilege_escalation': [
    { loginAlerts: RISKY_LOGIN_ALERTS },
    { when: (f) => isRoleChange(f) || f.type === 'admin.user.impersonated' },
    {
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
  'chain.data_exfiltration': [
    { loginAlerts: RISKY_LOGIN_ALERTS, when: isRoleChange, alerts: set('privilege.escalation') },
    { burst: true, alerts: set('data.bulk_export') },
    { when: isExport, laterEvent: true },
  ],
  'chain.host_compromise': [
    { alerts: set('host.ssh_brute_force') },
    { alerts: set('host.ssh_login_after_failures') },
    { when: types('server.user.sudo', 'server.user.su', 'server.user.created') },
    { alerts: set('host.persistence', 'host.suspicious_process') },
  ],
  'chain.cover_tracks': [{ alerts: COMPROMISE_ALERTS }, { when: types('server.log.cleared', 'server.log.tampered', 'server.firewall.rule_removed') }],
};

const CHAINS: readonly ChainDef[] = KILL_CHAINS.map((spec) => {
  const stages = DEFS[spec.type];
  if (stages === undefined || stages.length !== spec.stages.length) throw new Error(`kill chain ${spec.type}: stages do not match its spec`);
  return { spec, stages };
});

interface Mark {
  readonly chain: ChainDef;
  readonly stage: number;
  readonly slot: Slot<SequenceResult>;
}

/** One event's progress through the chains, between the batches. */
export class ChainRun {
  private readonly typeStages: { chain: ChainDef; subject: string; stages: number[] }[] = [];
  private readonly firstMarks: Mark[] = [];
  private secondMarks: Mark[] = [];
  private burst: Slot<WindowResult> | undefined;

  constructor(
    private readonly ctx: DetectContext,
    private readonly t: Thresholds,
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
      const subject = subjectOf(chain.spec, f);
      if (subject === undefined) continue;
      this.typeStages.push({ chain, subject, stages });
      for (const stage of stages) this.firstMarks.push(this.mark(this.ctx.ops, chain, subject, stage, []));
    }
  }

  /** Whether alerts or the access burst can meet a stage, so the second batch has chain work. */
  needsSecondBatch(answers: Answers, raisedAny: boolean): boolean {
    return raisedAny || (this.burst !== undefined && answers.get(this.burst).sum >= th(this.t, 'access_burst'));
  }

  /** Second batch: stages met by this event's alerts or by the burst, then the type stages after them again. */
  afterJudges(answers: Answers, raised: readonly Raised[], batch: OpBatch): void {
    const f = this.ctx.facts;
    const burst = this.burst !== undefined && answers.get(this.burst).sum >= th(this.t, 'access_burst');
    for (const chain of CHAINS) {
      const subject = subjectOf(chain.spec, f);
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
      const subject = subjectOf(m.chain.spec, this.ctx.facts) as string;
      this.ctx.raise(m.chain.spec.type, subject, { window_minutes: m.chain.spec.windowMs / MINUTE, stages: steps.map((s) => describeStep(m.chain.spec, s)) });
    }
  }

  /** Whether a mark of the second batch can complete a chain (whose alert then needs a third batch). */
  get mayCompleteInSecond(): boolean {
    return this.secondMarks.some((m) => m.stage === m.chain.stages.length - 1);
  }

  get hasFirstMarks(): boolean {
    return this.firstMarks.length > 0;
  }

  private mark(batch: OpBatch, chain: ChainDef, subject: string, stage: number, alerts: readonly string[]): Mark {
    const f = this.ctx.facts;
    const ref = { event_id: f.eventId ?? null, type: f.type, alerts: [...alerts] };
    const slot = batch.add({
      kind: 'sequence.mark',
      key: this.ctx.key('c', subject),
      field: chain.spec.type,
      stage,
      at: f.at,
      windowMs: chain.spec.windowMs,
      ref,
    });
    return { chain, stage, slot };
  }
}

/**
 * The stages each chain's type predicates meet for an event. They read only the type and the
 * inferred types, so the answer is kept per (type, inferred) pair; the table is bounded.
 */
const typeStageCache = new Map<string, readonly { chain: ChainDef; stages: number[] }[]>();
const TYPE_STAGE_CACHE_MAX = 4096;

function typeStagesOf(f: EventFacts): readonly { chain: ChainDef; stages: number[] }[] {
  const inferred = f.event.classification.inferred;
  const cacheKey = inferred.length === 0 ? f.type : `${f.type}|${inferred.join(',')}`;
  const hit = typeStageCache.get(cacheKey);
  if (hit !== undefined) return hit;
  const out: { chain: ChainDef; stages: number[] }[] = [];
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

function subjectOf(spec: KillChainSpec, f: EventFacts): string | undefined {
  if (spec.subject === 'host') return f.host === undefined ? undefined : `host:${f.host}`;
  return f.actor === undefined ? undefined : f.actorSubject;
}

function describeStep(spec: KillChainSpec, step: SequenceStep) {
  const ref = (step.ref ?? {}) as { event_id?: string | null; type?: string; alerts?: string[] };
  return {
    stage: spec.stages[step.stage]?.name ?? String(step.stage),
    at: new Date(step.at).toISOString(),
    event_id: ref.event_id ?? null,
    event_type: ref.type ?? null,
    alerts: ref.alerts ?? [],
  };
}
