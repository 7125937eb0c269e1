import { HOUR_MS } from '../../util/duration.js';
import { DETECTOR_FAMILIES } from '../../event/classification.js';
import { defineDetector } from '../detector.js';

/** network.tor_exit_node, network.blocklisted_ip, network.hosting_provider (authentication from a datacenter ASN). */
export const threatIntel = defineDetector({
  name: 'threat_intel',
  families: DETECTOR_FAMILIES,
  description: 'Source address on a Tor exit list, a blocklist, or (for authentication) a hosting provider ASN.',
  generic: true,
  // The score's threat-intel lines count these sources, and they decide only the events they
  // send: the address, not the actor, is what they are about.
  scored: false,
  alerts: {
    'network.tor_exit_node': {
      severity: 'medium',
      mitre: ['T1090.003'],
      windowMs: HOUR_MS,
      description: 'The source address is a Tor exit node: the real origin is hidden.',
      // An anonymised source hides who logs in: step-up authentication is the usual answer.
      decision: 'challenge',
    },
    'network.blocklisted_ip': {
      severity: 'high',
      mitre: ['T1583'],
      windowMs: HOUR_MS,
      description: 'The source address is on a threat-intelligence blocklist of known malicious hosts.',
    },
    'network.hosting_provider': {
      severity: 'low',
      mitre: ['T1583.003', 'T1090'],
      windowMs: HOUR_MS,
      description:
        'An authentication came from a datacenter or hosting provider network rather than a home, office or mobile network: often automation or a proxy.',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    const threat = f.event.enrichment.threat;
    if (threat === undefined || f.ip === undefined) return;
    const subject = f.ipSubject;
    if (threat.torExit) ctx.raise('network.tor_exit_node', subject, { actor: f.actor ?? null });
    if (threat.blocklists.length > 0) ctx.raise('network.blocklisted_ip', subject, { blocklists: threat.blocklists, actor: f.actor ?? null });
    if (threat.hostingAsn && f.auth) {
      const asn = f.event.enrichment.asn;
      ctx.raise('network.hosting_provider', subject, { asn: asn?.number ?? null, organization: asn?.organization ?? null, actor: f.actor ?? null });
    }
  },
});
