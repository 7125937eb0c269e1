/**
 * The detection catalogue: 21 detectors, 48 alert types, 5 kill chains. Data only; the
 * catalog serves it at GET /v1/catalog and the detect stage reads thresholds, severities and
 * windows from it, so what is documented is what runs.
 */
import type { AlertDecision, AlertTypeSpec, DetectorFamily, DetectorSpec, KillChainSpec, Severity, ThresholdSpec } from '../event/classification.js';
import { DETECTOR_FAMILIES } from '../event/classification.js';
import { SEVERITY_WEIGHTS, UNSCORED_DETECTORS } from '../scoring/weights.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const t = (name: string, dflt: number, min: number, max: number, description: string): ThresholdSpec => ({ name, default: dflt, min, max, description });
const USER_FAMILIES: readonly DetectorFamily[] = ['authentication', 'credential', 'session', 'account', 'privilege', 'data', 'admin', 'api'];

export const DETECTOR_SPECS: readonly DetectorSpec[] = [
  {
    name: 'brute_force',
    families: ['authentication', 'credential'],
    description:
      'Counts failed logins per actor and per source IP in a sliding window; flags a later success for that actor or from that IP, and a success after repeated failures of the actor.',
    alertTypes: ['auth.brute_force.account', 'auth.brute_force.ip', 'auth.login_after_failures'],
    thresholds: [
      t('account_failures', 10, 2, 100_000, 'Failed logins of one actor within the window that raise auth.brute_force.account.'),
      t('ip_failures', 20, 2, 100_000, 'Failed logins from one IP within the window that raise auth.brute_force.ip.'),
      t('window_minutes', 5, 1, 1440, 'Sliding window length in minutes.'),
      t(
        'success_after_failures',
        5,
        2,
        100_000,
        'Failed logins of one actor within the success window after which a success raises auth.login_after_failures.',
      ),
      t('success_window_minutes', 30, 1, 1440, 'How far back a success looks for failed logins of the same actor.'),
    ],
  },
  {
    name: 'credential_spray',
    families: ['authentication', 'credential'],
    description:
      'Counts distinct actors failing from one IP, from one /24 (IPv4) or /48 (IPv6) network, and from one hosting ASN; flags a later success from any of them.',
    alertTypes: ['auth.credential_spray', 'auth.credential_stuffing_success'],
    thresholds: [
      t('distinct_actors', 10, 2, 100_000, 'Distinct actors failing from one IP within the window.'),
      t('network_distinct_actors', 20, 2, 100_000, 'Distinct actors failing from one /24 or /48 network, or one hosting ASN, within the window.'),
      t('window_minutes', 10, 1, 1440, 'Sliding window length in minutes.'),
    ],
  },
  {
    name: 'distributed_attack',
    families: ['authentication', 'credential'],
    description: 'Counts distinct source IPs failing on one actor, and low-and-slow failures across the whole account.',
    alertTypes: ['auth.distributed_brute_force', 'auth.botnet_campaign'],
    thresholds: [
      t('distinct_ips', 10, 2, 100_000, 'Distinct IPs failing on one actor within the window.'),
      t('botnet_distinct_ips', 50, 2, 100_000, 'Distinct IPs with few tries each failing across the account within the window.'),
      t('botnet_max_tries', 3, 1, 7, 'Most failures per IP that still counts as a botnet node.'),
      t('window_minutes', 10, 1, 1440, 'Sliding window length in minutes.'),
    ],
  },
  {
    name: 'impossible_travel',
    families: ['authentication'],
    description:
      'Compares successive successful logins of an actor by great-circle distance and time, allowing for both accuracy radii and for proxy and mobile carrier gateways; logins sharing a session, a device or a proxy or carrier network are not compared.',
    alertTypes: ['auth.impossible_travel'],
    thresholds: [
      t('max_speed_kmh', 900, 100, 100_000, 'Speed above which travel between two logins is impossible.'),
      t('min_distance_km', 500, 1, 20_000, 'Distance (after subtracting both accuracy radii) below which travel is never flagged.'),
      t('max_accuracy_radius_km', 200, 1, 20_000, 'Locations less precise than this are not compared.'),
      t(
        'gateway_radius_km',
        1000,
        0,
        20_000,
        'Least uncertainty of a location on a known proxy or mobile carrier network, subtracted like an accuracy radius.',
      ),
    ],
  },
  {
    name: 'geo_device_anomaly',
    families: ['authentication'],
    description: 'Remembers the countries and device families each actor logs in from.',
    alertTypes: ['auth.new_country', 'auth.new_device'],
    thresholds: [
      t('memory_days', 90, 1, 730, 'How long a country or device stays known to an actor.'),
      t('min_known_logins', 3, 0, 1000, 'Successful logins an actor needs before novelty is flagged.'),
    ],
  },
  {
    name: 'session_anomaly',
    families: USER_FAMILIES,
    description: 'Tracks each session id: countries and user-agent families it is used from, and privilege changes within a session begun from a new place.',
    alertTypes: ['session.hijack_suspected', 'session.privilege_change'],
    thresholds: [t('session_hours', 24, 1, 720, 'How long a session id is tracked after it was last used.')],
  },
  {
    name: 'mfa_tampering',
    families: ['authentication', 'credential', 'account'],
    description: 'MFA disabled, bypass attempts, push/challenge fatigue and an approval during a fatigue burst.',
    alertTypes: ['auth.mfa_disabled', 'auth.mfa_bypass_attempt', 'auth.mfa_fatigue', 'auth.mfa_fatigue_accepted'],
    thresholds: [
      t('fatigue_failures', 5, 2, 10_000, 'MFA challenge failures of one actor within the window that raise auth.mfa_fatigue.'),
      t('window_minutes', 10, 1, 1440, 'Sliding window length in minutes.'),
    ],
  },
  {
    name: 'account_takeover_signals',
    families: ['account', 'credential', 'authentication'],
    description: 'Sensitive account changes soon after a login from a new country or device, and password-reset floods.',
    alertTypes: ['account.change_after_new_login', 'account.password_reset_abuse'],
    thresholds: [
      t('change_window_minutes', 60, 1, 10_080, 'How long after a new-country or new-device login a sensitive change is suspicious.'),
      t('resets_per_actor', 5, 2, 10_000, 'Password resets for one actor within the reset window.'),
      t('reset_actors_per_ip', 20, 2, 100_000, 'Distinct actors whose password is reset from one IP within the reset window.'),
      t('reset_window_minutes', 60, 1, 1440, 'Reset window length in minutes.'),
    ],
  },
  {
    name: 'privilege_escalation',
    families: ['privilege', 'admin', 'account'],
    description: 'Role changes to an admin-like role (admin, owner, root, superuser) and impersonation.',
    alertTypes: ['privilege.escalation', 'privilege.impersonation'],
  },
  {
    name: 'bulk_export',
    families: ['data', 'admin'],
    description: "Large exports in one event, and export volume per actor over an hour above the larger of a static threshold and the actor's own baseline.",
    alertTypes: ['data.bulk_export', 'data.exfiltration_volume'],
    thresholds: [
      t('rows', 10_000, 1, 1e12, 'Rows in one export that raise data.bulk_export.'),
      t('megabytes', 100, 1, 1e9, 'Size in MB (10^6 bytes) of one export that raises data.bulk_export.'),
      t('volume_rows', 50_000, 1, 1e12, 'Rows exported by one actor within the window that raise data.exfiltration_volume (the floor of the baseline).'),
      t('volume_exports', 20, 2, 100_000, 'Exports by one actor within the window that raise data.exfiltration_volume (the floor of the baseline).'),
      t('window_minutes', 60, 1, 10_080, 'Sliding window length in minutes.'),
      t('baseline_days', 14, 2, 90, "Days of an actor's export history the baseline is learnt from."),
      t('baseline_min_days', 3, 1, 90, 'Days with exports an actor needs before its baseline applies; until then only the static thresholds do.'),
      t(
        'baseline_deviations',
        4,
        1,
        100,
        'Robust standard deviations (1.4826 × median absolute deviation) above the median daily peak that the volume must exceed.',
      ),
      t('baseline_margin_percent', 50, 0, 10_000, 'Least room above the median daily peak, in percent of it, for actors whose volume never varies.'),
    ],
  },
  {
    name: 'disposable_email',
    families: ['account'],
    description: 'Accounts created or re-pointed to a disposable email domain.',
    alertTypes: ['account.disposable_email'],
  },
  {
    name: 'breached_password',
    families: ['credential', 'authentication'],
    description: 'A password found in a breached-password list was used.',
    alertTypes: ['auth.breached_password'],
  },
  {
    name: 'threat_intel',
    families: DETECTOR_FAMILIES,
    generic: true,
    description: 'Source address on a Tor exit list, a blocklist, or (for authentication) a hosting provider ASN.',
    alertTypes: ['network.tor_exit_node', 'network.blocklisted_ip', 'network.hosting_provider'],
  },
  {
    name: 'request_scanner',
    families: DETECTOR_FAMILIES,
    generic: true,
    description: 'Injection payloads found by request scanning and offensive scanner user agents.',
    alertTypes: ['request.sql_injection', 'request.xss', 'request.path_traversal', 'request.command_injection', 'request.scanner_user_agent'],
  },
  {
    name: 'api_abuse',
    families: ['api', 'authentication'],
    description: 'Bursts of 401/403 answers and enumeration of many failing paths from one IP.',
    alertTypes: ['api.unauthorized_burst', 'api.enumeration'],
    thresholds: [
      t('unauthorized', 20, 2, 100_000, '401/403 answers to one IP within the window.'),
      t('distinct_paths', 30, 2, 100_000, 'Distinct failing paths requested by one IP within the window.'),
      t('window_minutes', 5, 1, 1440, 'Sliding window length in minutes.'),
    ],
  },
  {
    name: 'ssh_brute_force',
    families: ['host'],
    description: 'SSH failures per source IP per host, and a success from such an IP.',
    alertTypes: ['host.ssh_brute_force', 'host.ssh_login_after_failures'],
    thresholds: [
      t('failures', 10, 2, 100_000, 'SSH failures from one IP on one host within the window.'),
      t('window_minutes', 5, 1, 1440, 'Sliding window length in minutes.'),
    ],
  },
  {
    name: 'host_integrity',
    families: ['host'],
    description: 'Log tampering, changes to sensitive files and persistence mechanisms on a host.',
    alertTypes: ['host.log_tampering', 'host.sensitive_file_change', 'host.persistence'],
  },
  {
    name: 'suspicious_process',
    families: ['host'],
    description: 'Reverse shells, download-and-execute, crypto miners and encoded commands.',
    alertTypes: ['host.suspicious_process'],
  },
  {
    name: 'container_security',
    families: ['host'],
    description: 'Container escape attempts and containers started with the host exposed.',
    alertTypes: ['host.container_escape'],
  },
  {
    name: 'perimeter',
    families: ['perimeter', 'host'],
    description: 'Port scans reported by the agent and firewall rules removed or opened to the world.',
    alertTypes: ['host.port_scan', 'host.firewall_weakened'],
  },
  {
    name: 'kill_chain',
    families: DETECTOR_FAMILIES,
    description: 'Follows the ordered stages of the five kill chains per actor or host within their windows.',
    alertTypes: ['chain.account_takeover', 'chain.privilege_escalation', 'chain.data_exfiltration', 'chain.host_compromise', 'chain.cover_tracks'],
    thresholds: [t('access_burst', 30, 2, 100_000, 'Data accesses by one actor within 10 minutes that make the "data access burst" stage.')],
  },
];

/**
 * What an alert means for decisions: a high alert on its own reaches `challenge`, a critical one
 * `block`; a behavioural high or critical alert also keeps the actor's and the session's later
 * events at `challenge` while it is open. Request-scanner findings are left to the score (one
 * payload alone is often a curious user); Tor and blocklisted sources decide only the events
 * they send, since the address, not the actor, is what they are about.
 */
const DECISION_BY_SEVERITY: Readonly<Partial<Record<Severity, AlertDecision>>> = { high: 'challenge', critical: 'block' };
const DECISION_OVERRIDES: Readonly<Record<string, AlertDecision>> = {
  // Enumerating endpoints is deliberate probing; a bot that keeps going should meet a challenge.
  'api.enumeration': 'challenge',
  // An anonymised source hides who logs in: step-up authentication is the usual answer.
  'network.tor_exit_node': 'challenge',
};

const a = (type: string, detector: string, severity: Severity, mitre: readonly string[], windowMs: number, description: string): AlertTypeSpec => {
  const decision = detector === 'request_scanner' ? undefined : (DECISION_OVERRIDES[type] ?? DECISION_BY_SEVERITY[severity]);
  const carries = DECISION_BY_SEVERITY[severity] !== undefined && !UNSCORED_DETECTORS.has(detector);
  return {
    type,
    detector,
    severity,
    points: SEVERITY_WEIGHTS[severity],
    mitre,
    description,
    windowMs,
    ...(decision === undefined ? {} : { decision }),
    ...(carries ? { carries } : {}),
  };
};

export const ALERT_TYPES: readonly AlertTypeSpec[] = [
  a(
    'auth.brute_force.account',
    'brute_force',
    'high',
    ['T1110.001'],
    5 * MIN,
    "Many failed logins for one account in a short window: someone is guessing this account's password. Check whether a success followed, and consider locking the account or requiring MFA.",
  ),
  a(
    'auth.brute_force.ip',
    'brute_force',
    'high',
    ['T1110.001', 'T1110.003'],
    5 * MIN,
    'Many failed logins from one IP address in a short window, whatever the accounts: an automated password-guessing source. Block or challenge the address.',
  ),
  a(
    'auth.login_after_failures',
    'brute_force',
    'high',
    ['T1110.001', 'T1078'],
    30 * MIN,
    'A login succeeded for an account after repeated failed logins within half an hour, too few or too slow for a brute-force alert: the password may have been guessed. Confirm the login with the user.',
  ),
  a(
    'auth.credential_spray',
    'credential_spray',
    'high',
    ['T1110.003'],
    10 * MIN,
    'One IP address, one /24 (/48) network or one hosting provider network failed to log in to many different accounts in a short window: password spraying, a few common passwords tried against many users, possibly spread over a few addresses.',
  ),
  a(
    'auth.credential_stuffing_success',
    'credential_spray',
    'critical',
    ['T1110.004', 'T1078'],
    10 * MIN,
    'A login succeeded for an account under an open brute-force alert, or from an IP address that is failing against many accounts: guessed, sprayed or stuffed credentials worked. Treat the account as compromised until the user confirms the login.',
  ),
  a(
    'auth.distributed_brute_force',
    'distributed_attack',
    'high',
    ['T1110.001'],
    10 * MIN,
    'Failed logins for one account came from many different IP addresses in a short window: a distributed attack that stays under per-IP limits.',
  ),
  a(
    'auth.botnet_campaign',
    'distributed_attack',
    'high',
    ['T1110.004', 'T1584.005'],
    10 * MIN,
    'Many IP addresses, each trying only a few times, are failing logins across the account: a low-and-slow botnet campaign designed to evade per-IP counting.',
  ),
  a(
    'auth.impossible_travel',
    'impossible_travel',
    'high',
    ['T1078'],
    HOUR,
    'Two successful logins of the same user are further apart than anyone could travel in the time between them, even allowing for the precision of both locations. One of the sessions is probably not the user.',
  ),
  a(
    'auth.new_country',
    'geo_device_anomaly',
    'medium',
    ['T1078'],
    HOUR,
    'A user with an established login history logged in from a country not seen for them in the memory period. Usually travel, sometimes a stolen credential.',
  ),
  a(
    'auth.new_device',
    'geo_device_anomaly',
    'low',
    ['T1078'],
    HOUR,
    'A user with an established login history logged in with a browser and operating system family not seen for them before.',
  ),
  a(
    'session.hijack_suspected',
    'session_anomaly',
    'high',
    ['T1185', 'T1550.004'],
    HOUR,
    'The same session id was used from two countries or two different user-agent families: the session token was probably copied to another machine.',
  ),
  a(
    'session.privilege_change',
    'session_anomaly',
    'high',
    ['T1078', 'T1098'],
    HOUR,
    'Roles or permissions were changed within a session that began from a new country or device.',
  ),
  a(
    'auth.mfa_disabled',
    'mfa_tampering',
    'high',
    ['T1556.006'],
    HOUR,
    'Multi-factor authentication was turned off for an account. Legitimate users rarely do this; attackers do it to keep access.',
  ),
  a(
    'auth.mfa_bypass_attempt',
    'mfa_tampering',
    'high',
    ['T1556.006', 'T1111'],
    HOUR,
    'Someone tried to get past multi-factor authentication without completing it (skipped step, replayed or forged challenge).',
  ),
  a(
    'auth.mfa_fatigue',
    'mfa_tampering',
    'high',
    ['T1621'],
    10 * MIN,
    'Many MFA challenges for one user failed or were rejected in a short window: an attacker with the password is flooding the user with prompts hoping one gets approved.',
  ),
  a(
    'auth.mfa_fatigue_accepted',
    'mfa_tampering',
    'critical',
    ['T1621', 'T1078'],
    HOUR,
    'An MFA challenge was approved while a fatigue burst on the same user was open: the user probably gave in to the flood of prompts, and the attacker holds a working session.',
  ),
  a(
    'account.change_after_new_login',
    'account_takeover_signals',
    'high',
    ['T1098', 'T1078'],
    HOUR,
    'Email, phone, password or MFA settings were changed shortly after a login from a new country or device: a classic account takeover step to lock the owner out.',
  ),
  a(
    'account.password_reset_abuse',
    'account_takeover_signals',
    'medium',
    ['T1098', 'T1110'],
    HOUR,
    'Too many password resets for one user, or for many users from one IP address, in an hour: reset flooding, account enumeration or takeover through the reset flow.',
  ),
  a(
    'privilege.escalation',
    'privilege_escalation',
    'high',
    ['T1098', 'T1078.003'],
    HOUR,
    'A user was given an administrator-like role (admin, owner, root, superuser). Confirm the change was approved.',
  ),
  a(
    'privilege.impersonation',
    'privilege_escalation',
    'medium',
    ['T1078', 'T1134'],
    HOUR,
    'An administrator started acting as another user. Legitimate for support, but worth recording and reviewing.',
  ),
  a('data.bulk_export', 'bulk_export', 'medium', ['T1530', 'T1567'], HOUR, 'One export or download moved a large number of rows or bytes.'),
  a(
    'data.exfiltration_volume',
    'bulk_export',
    'high',
    ['T1567', 'T1030'],
    HOUR,
    'One user exported more data in an hour than normal work needs and than their own history shows, in total rows or number of exports: possible data theft.',
  ),
  a(
    'account.disposable_email',
    'disposable_email',
    'low',
    ['T1585.002'],
    DAY,
    'An account was created with, or changed to, an address at a disposable email provider: common for fake sign-ups and abuse.',
  ),
  a(
    'auth.breached_password',
    'breached_password',
    'medium',
    ['T1110.004', 'T1078'],
    DAY,
    'The password used appears in a list of breached passwords. Ask the user to change it; if the login succeeded it may not have been the user.',
  ),
  a('network.tor_exit_node', 'threat_intel', 'medium', ['T1090.003'], HOUR, 'The source address is a Tor exit node: the real origin is hidden.'),
  a('network.blocklisted_ip', 'threat_intel', 'high', ['T1583'], HOUR, 'The source address is on a threat-intelligence blocklist of known malicious hosts.'),
  a(
    'network.hosting_provider',
    'threat_intel',
    'low',
    ['T1583.003', 'T1090'],
    HOUR,
    'An authentication came from a datacenter or hosting provider network rather than a home, office or mobile network: often automation or a proxy.',
  ),
  a(
    'request.sql_injection',
    'request_scanner',
    'high',
    ['T1190'],
    HOUR,
    'The request carried an SQL injection payload (in the path, query, user agent or metadata).',
  ),
  a('request.xss', 'request_scanner', 'medium', ['T1189', 'T1059.007'], HOUR, 'The request carried a cross-site scripting payload.'),
  a(
    'request.path_traversal',
    'request_scanner',
    'high',
    ['T1190', 'T1083'],
    HOUR,
    'The request tried to escape a directory with traversal sequences to read files it should not.',
  ),
  a('request.command_injection', 'request_scanner', 'critical', ['T1190', 'T1059'], HOUR, 'The request carried an operating-system command injection payload.'),
  a(
    'request.scanner_user_agent',
    'request_scanner',
    'medium',
    ['T1595.002'],
    HOUR,
    'The request was made by an offensive security scanner (sqlmap, nikto, nuclei, ...).',
  ),
  a(
    'api.unauthorized_burst',
    'api_abuse',
    'medium',
    ['T1110', 'T1595'],
    5 * MIN,
    'Many 401/403 answers to one IP address in a short window: invalid or stolen tokens being tried, or probing of protected endpoints.',
  ),
  a(
    'api.enumeration',
    'api_abuse',
    'medium',
    ['T1595.003', 'T1083'],
    5 * MIN,
    'One IP address requested many different paths that failed in a short window: endpoint or object enumeration.',
  ),
  a(
    'host.ssh_brute_force',
    'ssh_brute_force',
    'high',
    ['T1110.001', 'T1021.004'],
    5 * MIN,
    'Many failed SSH logins from one address on one host in a short window.',
  ),
  a(
    'host.ssh_login_after_failures',
    'ssh_brute_force',
    'critical',
    ['T1110.001', 'T1021.004', 'T1078'],
    HOUR,
    'An SSH login succeeded from an address that was just brute-forcing this host: the guessing probably worked.',
  ),
  a(
    'host.log_tampering',
    'host_integrity',
    'high',
    ['T1070.002'],
    HOUR,
    'System logs were cleared or modified outside normal rotation: a way to hide what happened on the host.',
  ),
  a(
    'host.sensitive_file_change',
    'host_integrity',
    'high',
    ['T1098.004', 'T1003.008', 'T1548.003'],
    HOUR,
    'A security-sensitive file changed (/etc/passwd, /etc/shadow, sudoers, SSH authorized_keys, ...).',
  ),
  a(
    'host.persistence',
    'host_integrity',
    'medium',
    ['T1053.003', 'T1547.006', 'T1205'],
    HOUR,
    'A way to survive reboots or come back later was added: a cron job, a new listening port or a kernel module.',
  ),
  a(
    'host.suspicious_process',
    'suspicious_process',
    'high',
    ['T1059.004', 'T1105', 'T1496', 'T1027'],
    HOUR,
    'A process ran that looks like an attack tool: reverse shell, download piped to a shell, crypto miner or encoded command.',
  ),
  a(
    'host.container_escape',
    'container_security',
    'critical',
    ['T1611'],
    HOUR,
    'A container tried to break out to its host (privileged mounts, host namespaces, runtime exploits).',
  ),
  a('host.port_scan', 'perimeter', 'medium', ['T1046'], HOUR, 'The host agent saw a port scan against the host.'),
  a('host.firewall_weakened', 'perimeter', 'high', ['T1562.004'], HOUR, 'A firewall rule was removed, or a rule was added that accepts traffic from anywhere.'),
  a(
    'chain.account_takeover',
    'kill_chain',
    'critical',
    ['T1110', 'T1078', 'T1098'],
    HOUR,
    'Kill chain: a credential attack or risky login, then a successful login, then a sensitive account change (MFA, email, phone or password) within an hour. The account is very probably taken over.',
  ),
  a(
    'chain.privilege_escalation',
    'kill_chain',
    'critical',
    ['T1078', 'T1098'],
    HOUR,
    'Kill chain: a risky login, then a role change or impersonation, then an administrative change (configuration, API key, new user) within an hour.',
  ),
  a(
    'chain.data_exfiltration',
    'kill_chain',
    'critical',
    ['T1078', 'T1530', 'T1567'],
    HOUR,
    'Kill chain: a risky login or privilege change, then a burst of data access, then a bulk export or download within an hour.',
  ),
  a(
    'chain.host_compromise',
    'kill_chain',
    'critical',
    ['T1110.001', 'T1021.004', 'T1548.003', 'T1053.003'],
    2 * HOUR,
    'Kill chain on one host: SSH brute force, a login from the same address, privilege use (sudo, su, new user), then persistence or a suspicious process within two hours.',
  ),
  a(
    'chain.cover_tracks',
    'kill_chain',
    'critical',
    ['T1070.002', 'T1562.004'],
    HOUR,
    'Kill chain on one host: a compromise indicator followed within an hour by cleared or tampered logs or a removed firewall rule.',
  ),
];

export const KILL_CHAINS: readonly KillChainSpec[] = [
  {
    type: 'chain.account_takeover',
    subject: 'actor',
    windowMs: HOUR,
    stages: [
      {
        name: 'credential_attack_or_risky_login',
        description:
          'Brute force, spray, distributed or stuffing attack on the actor, or a login from Tor, a blocklisted address, a new country or impossible travel.',
      },
      { name: 'login_success', description: 'A successful login of the actor.' },
      { name: 'sensitive_change', description: 'MFA disabled, email, phone or password changed.' },
    ],
  },
  {
    type: 'chain.privilege_escalation',
    subject: 'actor',
    windowMs: HOUR,
    stages: [
      {
        name: 'risky_login',
        description: 'A successful login that raised a risk alert (new country or device, impossible travel, Tor, blocklisted address, stuffing).',
      },
      { name: 'role_change_or_impersonation', description: 'A role or permission change, or impersonation.' },
      { name: 'admin_change', description: 'Configuration or settings changed, an API key or a user created, a role created.' },
    ],
  },
  {
    type: 'chain.data_exfiltration',
    subject: 'actor',
    windowMs: HOUR,
    stages: [
      { name: 'risky_login_or_privilege_change', description: 'A risky login, or a role or permission change.' },
      { name: 'data_access_burst', description: 'Data accesses reaching the access_burst threshold within 10 minutes, or a large export (data.bulk_export).' },
      { name: 'bulk_export', description: 'An export or download in a later event.' },
    ],
  },
  {
    type: 'chain.host_compromise',
    subject: 'host',
    windowMs: 2 * HOUR,
    stages: [
      { name: 'ssh_brute_force', description: 'SSH brute force against the host.' },
      { name: 'ssh_login_same_ip', description: 'An SSH login from an address that was brute-forcing the host.' },
      { name: 'privilege_use', description: 'sudo, su or a user created on the host.' },
      { name: 'persistence_or_suspicious_process', description: 'Persistence added or a suspicious process run on the host.' },
    ],
  },
  {
    type: 'chain.cover_tracks',
    subject: 'host',
    windowMs: HOUR,
    stages: [
      {
        name: 'compromise_indicator',
        description:
          'A host alert that indicates compromise (login after brute force, suspicious process, persistence, sensitive file change, container escape, host compromise chain).',
      },
      { name: 'cover_tracks', description: 'Logs cleared or tampered, or a firewall rule removed.' },
    ],
  },
];

const ALERT_BY_TYPE = new Map(ALERT_TYPES.map((spec) => [spec.type, spec]));

/** The spec of a known alert type; throws on a typo so a detector cannot raise an undocumented type. */
export function alertSpec(type: string): AlertTypeSpec {
  const spec = ALERT_BY_TYPE.get(type);
  if (spec === undefined) throw new Error(`unknown alert type ${type}`);
  return spec;
}
