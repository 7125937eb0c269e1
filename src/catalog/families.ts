import type { DetectorFamily } from '../event/classification.js';

export const FAMILY_DESCRIPTIONS: Readonly<Record<DetectorFamily, string>> = {
  authentication: 'Login attempts and their outcomes: brute force, spraying, travel and location anomalies.',
  credential: 'Passwords, second factors, tokens and keys: their changes, resets and misuse.',
  session: 'Session lifecycle: creation, logout, hijacking and changes inside a session.',
  account: 'Account lifecycle and profile: creation, deletion, contact details, suspension.',
  privilege: 'Roles, permissions and impersonation.',
  data: 'Data access and movement: reads, exports, downloads, bulk operations.',
  admin: 'Administrative changes: configuration, users, keys, billing, integrations.',
  api: 'API traffic: failed, unauthorised and rate-limited requests.',
  host: 'Events from the host agent: SSH, users, files, processes, cron, containers, logs.',
  perimeter: 'Network exposure of a host: port scans, listeners, firewall rules.',
};
