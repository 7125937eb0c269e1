import { MINUTE_MS } from '../../util/duration.js';
import { defineDetector, type DetectContext, type Slot } from '../detector.js';
import { networkKind, networkPrefix } from '../network-kinds.js';
import type { AlertPeekResult, DistinctResult } from '../state/state-store.js';

const SPRAY = 'auth.credential_spray';
const SPRAY_WINDOW_MS = 10 * MINUTE_MS;

/**
 * Where a login is counted: the address itself, its /24 or /48, and its autonomous system when
 * that is a hosting network (a spray rented across a few servers of one provider). An eyeball
 * network's ASN holds too many people to count failures by; its /24 does not.
 */
function spraySubjects(ctx: DetectContext): { subject: string; threshold: 'distinct_actors' | 'network_distinct_actors' }[] {
  const f = ctx.facts;
  if (f.ip === undefined) return [];
  const out: { subject: string; threshold: 'distinct_actors' | 'network_distinct_actors' }[] = [{ subject: f.ipSubject, threshold: 'distinct_actors' }];
  // The network of the address as sent: a truncated or pseudonymised address still counts under its /24 or /48.
  const prefix = networkPrefix(f.event.sent?.ip ?? f.ip);
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
export const credentialSpray = defineDetector({
  name: 'credential_spray',
  families: ['authentication', 'credential'],
  description:
    'Counts distinct actors failing from one IP, from one /24 (IPv4) or /48 (IPv6) network, and from one hosting ASN; flags a later success from any of them.',
  thresholds: {
    distinct_actors: { default: 10, min: 2, max: 100_000, description: 'Distinct actors failing from one IP within the window.' },
    network_distinct_actors: {
      default: 20,
      min: 2,
      max: 100_000,
      description: 'Distinct actors failing from one /24 or /48 network, or one hosting ASN, within the window.',
    },
    window_minutes: { default: 10, min: 1, max: 1440, description: 'Sliding window length in minutes.' },
  },
  alerts: {
    'auth.credential_spray': {
      severity: 'high',
      mitre: ['T1110.003'],
      windowMs: SPRAY_WINDOW_MS,
      description:
        'One IP address, one /24 (/48) network or one hosting provider network failed to log in to many different accounts in a short window: password spraying, a few common passwords tried against many users, possibly spread over a few addresses.',
    },
    'auth.credential_stuffing_success': {
      severity: 'critical',
      mitre: ['T1110.004', 'T1078'],
      windowMs: 10 * MINUTE_MS,
      description:
        'A login succeeded for an account under an open brute-force alert, or from an IP address that is failing against many accounts: guessed, sprayed or stuffed credentials worked. Treat the account as compromised until the user confirms the login.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined || (!f.loginFailure && !f.loginSuccess)) return;
    const windowMs = t.window_minutes * MINUTE_MS;
    const subjects = spraySubjects(ctx);
    if (f.loginFailure) {
      if (f.actor === undefined) return;
      const counts: { subject: string; threshold: number; slot: Slot<DistinctResult> }[] = subjects.map(({ subject, threshold }) => ({
        subject,
        threshold: t[threshold],
        slot: ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', subject), field: 'spray', at: f.at, windowMs, member: f.actor }),
      }));
      return (answers) => {
        for (const { subject, threshold, slot } of counts) {
          const actors = answers.get(slot).distinct;
          if (actors >= threshold) ctx.raise(SPRAY, subject, { distinct_actors: actors, threshold, window_minutes: t.window_minutes, ip: f.ip });
        }
      };
    }
    const peeks: Slot<AlertPeekResult>[] = [];
    for (const { subject } of subjects) {
      peeks.push(ctx.ops.add({ kind: 'alert.peek', key: ctx.alertKey(subject), field: SPRAY, at: f.at, windowMs: SPRAY_WINDOW_MS }));
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
});
