import type { Detector } from '../detector.js';

/** network.tor_exit_node, network.blocklisted_ip, network.hosting_provider (authentication from a datacenter ASN). */
export const threatIntel: Detector = {
  name: 'threat_intel',
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
};
