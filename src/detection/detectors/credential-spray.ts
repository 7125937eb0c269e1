import { MINUTE, th, type DetectContext, type Detector, type Slot } from '../detector.js';
import { networkKind, networkPrefix } from '../network-kinds.js';
import { alertSpec } from '../specs.js';
import type { AlertPeekResult, DistinctResult } from '../state/state-store.js';

const SPRAY = 'auth.credential_spray';

/**
 * Where a login is counted: the address itself, its /24 or /48, and its autonomous system when
 * that is a hosting network (a spray rented across a few servers of one provider). An eyeball
 * network's ASN holds too many people to count failures by; its /24 does not.
 */
function spraySubjects(ctx: DetectContext): { subject: string; threshold: 'distinct_actors' | 'network_distinct_actors' }[] {
  const f = ctx.facts;
  if (f.ip === undefined) return [];
  const out: { subject: string; threshold: 'distinct_actors' | 'network_distinct_actors' }[] = [{ subject: f.ipSubject, threshold: 'distinct_actors' }];
  const prefix = networkPrefix(f.ip);
  if (prefix !== undefined) out.push({ subject: `net:${prefix}`, threshold: 'network_distinct_actors' });
  const asn = f.event.enrichment.asn?.number;
  if (asn !== undefined && (f.event.enrichment.threat?.hostingAsn === true || networkKind(asn) === 'hosting'))
    out.push({ subject: `asn:${asn}`, threshold: 'network_distinct_actors' });
  return out;
}

/**
 * auth.credential_spray: many distinct actors failing from one IP, one /24 (/48), or one hosting
 * ASN, not counting actors that then logged in from it (typos behind a shared office or carrier
 * address are not a spray); auth.credential_stuffing_success: a success from an address, network
 * or hosting ASN with an open spray alert.
 */
export const credentialSpray: Detector = {
  name: 'credential_spray',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined || (!f.loginFailure && !f.loginSuccess)) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const subjects = spraySubjects(ctx);
    if (f.loginFailure) {
      if (f.actor === undefined) return;
      const counts: { subject: string; threshold: number; slot: Slot<DistinctResult> }[] = subjects.map(({ subject, threshold }) => ({
        subject,
        threshold: th(t, threshold),
        slot: ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', subject), field: 'spray', at: f.at, windowMs, member: f.actor }),
      }));
      return (answers) => {
        for (const { subject, threshold, slot } of counts) {
          const actors = answers.get(slot).distinct;
          if (actors >= threshold) ctx.raise(SPRAY, subject, { distinct_actors: actors, threshold, window_minutes: th(t, 'window_minutes'), ip: f.ip });
        }
      };
    }
    const peeks: Slot<AlertPeekResult>[] = [];
    for (const { subject } of subjects) {
      peeks.push(ctx.ops.add({ kind: 'alert.peek', key: ctx.alertKey(subject), field: SPRAY, at: f.at, windowMs: alertSpec(SPRAY).windowMs ?? windowMs }));
      if (f.actor !== undefined)
        ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', subject), field: 'spray', at: f.at, windowMs, member: f.actor, remove: true });
    }
    return (answers) => {
      for (const slot of peeks) {
        const alert = answers.get(slot).alert;
        if (alert === null || alert.lastSeen > f.at) continue;
        ctx.raise('auth.credential_stuffing_success', f.actor !== undefined ? f.actorSubject : f.ipSubject, {
          ip: f.ip,
          spray_alert: alert.id,
          spray_since: new Date(alert.firstSeen).toISOString(),
        });
        return;
      }
    };
  },
};
