import { HOUR_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';
import { hostSubject } from '../facts.js';

const OPEN_SOURCES = new Set(['0.0.0.0/0', '::/0', 'any', 'anywhere', '*', '0.0.0.0']);
const ACCEPTING = new Set(['accept', 'allow', 'pass']);

/** host.port_scan (reported by the agent), host.firewall_weakened (rule removed, or an accept-from-anywhere rule added). */
export const perimeter = defineDetector({
  name: 'perimeter',
  families: ['perimeter', 'host'],
  description: 'Port scans reported by the agent and firewall rules removed or opened to the world.',
  alerts: {
    'host.port_scan': {
      severity: 'medium',
      mitre: ['T1046'],
      windowMs: HOUR_MS,
      description: 'The host agent saw a port scan against the host.',
    },
    'host.firewall_weakened': {
      severity: 'high',
      mitre: ['T1562.004'],
      windowMs: HOUR_MS,
      description: 'A firewall rule was removed, or a rule was added that accepts traffic from anywhere.',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    const meta = f.event.metadata;
    if (f.type === 'server.network.port_scan_detected') {
      ctx.raise('host.port_scan', hostSubject(f), { source: meta.source_ip ?? meta.source ?? f.ip ?? null, ports: meta.ports ?? meta.port_count ?? null });
      return;
    }
    if (f.type === 'server.firewall.rule_removed') {
      ctx.raise('host.firewall_weakened', hostSubject(f), { change: 'rule_removed', rule: meta.rule ?? null });
      return;
    }
    if (f.type !== 'server.firewall.rule_added') return;
    const action = String(meta.action ?? meta.target ?? meta.policy ?? '').toLowerCase();
    const source = String(meta.source ?? meta.src ?? meta.from ?? '').toLowerCase();
    if (ACCEPTING.has(action) && OPEN_SOURCES.has(source))
      ctx.raise('host.firewall_weakened', hostSubject(f), { change: 'open_rule_added', rule: meta.rule ?? null, port: meta.port ?? null });
  },
});
