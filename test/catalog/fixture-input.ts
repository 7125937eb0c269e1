import type { CatalogInput, DetectorFamily, DetectorSpec } from '../../src/event/classification.js';

const detector = (name: string, families: DetectorFamily[], generic = false): DetectorSpec => ({
  name,
  families,
  description: name,
  alertTypes: [`${name}.alert`],
  generic,
});

/** A stand-in for the detection module's declarations: the real names, plausible families. */
export const FIXTURE_INPUT: CatalogInput = {
  detectors: [
    detector('brute_force', ['authentication']),
    detector('credential_spray', ['authentication']),
    detector('distributed_attack', ['authentication']),
    detector('impossible_travel', ['authentication']),
    detector('geo_device_anomaly', ['authentication']),
    detector('session_anomaly', ['session', 'privilege']),
    detector('mfa_tampering', ['credential']),
    detector('account_takeover_signals', ['account', 'credential']),
    detector('privilege_escalation', ['privilege']),
    detector('bulk_export', ['data']),
    detector('disposable_email', ['account']),
    detector('breached_password', ['credential', 'authentication']),
    detector('threat_intel', [], true),
    detector('request_scanner', [], true),
    detector('api_abuse', ['api']),
    detector('ssh_brute_force', ['host']),
    detector('host_integrity', ['host']),
    detector('suspicious_process', ['host']),
    detector('container_security', ['host']),
    detector('perimeter', ['perimeter']),
    detector('kill_chain', ['authentication', 'account', 'privilege', 'data', 'admin', 'host', 'perimeter', 'credential']),
  ],
  alertTypes: [
    {
      type: 'auth.brute_force.account',
      detector: 'brute_force',
      severity: 'high',
      points: 35,
      mitre: ['T1110.001'],
      description: 'Many failures for one actor.',
    },
    { type: 'network.tor_exit_node', detector: 'threat_intel', severity: 'medium', points: 20, mitre: ['T1090.003'], description: 'Tor exit node.' },
  ],
  killChains: [{ type: 'chain.account_takeover', subject: 'actor', windowMs: 3_600_000, stages: [{ name: 'credential_attack', description: 'x' }] }],
};
