import { HOUR_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';
import { hostSubject } from '../facts.js';
import { PATH_KEYS, textOf } from '../metadata.js';

const SENSITIVE_EXACT = new Set([
  '/etc/passwd',
  '/etc/shadow',
  '/etc/group',
  '/etc/gshadow',
  '/etc/sudoers',
  '/etc/ssh/sshd_config',
  '/etc/ld.so.preload',
  '/etc/pam.conf',
]);
const SENSITIVE_PREFIXES = ['/etc/sudoers.d/', '/etc/pam.d/', '/root/.ssh/', '/etc/security/'];
const SENSITIVE_SUFFIXES = ['/.ssh/authorized_keys', '/.ssh/authorized_keys2'];
const PERSISTENCE_PREFIXES = [
  '/etc/cron',
  '/var/spool/cron/',
  '/etc/systemd/system/',
  '/etc/init.d/',
  '/etc/rc.local',
  '/etc/profile.d/',
  '/lib/systemd/system/',
];
const FILE_CHANGE_TYPES = new Set(['server.file.created', 'server.file.modified', 'server.file.deleted', 'server.file.permission_changed']);
const PERSISTENCE_TYPES = new Set(['server.cron.added', 'server.cron.modified', 'server.network.listener.opened', 'server.kernel.module_loaded']);

export function isSensitivePath(path: string): boolean {
  return SENSITIVE_EXACT.has(path) || SENSITIVE_PREFIXES.some((p) => path.startsWith(p)) || SENSITIVE_SUFFIXES.some((s) => path.endsWith(s));
}
const isPersistencePath = (path: string): boolean => PERSISTENCE_PREFIXES.some((p) => path.startsWith(p));

/** host.log_tampering, host.sensitive_file_change, host.persistence (cron, new listener, kernel module, boot/cron files). */
export const hostIntegrity = defineDetector({
  name: 'host_integrity',
  families: ['host'],
  description: 'Log tampering, changes to sensitive files and persistence mechanisms on a host.',
  alerts: {
    'host.log_tampering': {
      severity: 'high',
      mitre: ['T1070.002'],
      windowMs: HOUR_MS,
      description: 'System logs were cleared or modified outside normal rotation: a way to hide what happened on the host.',
    },
    'host.sensitive_file_change': {
      severity: 'high',
      mitre: ['T1098.004', 'T1003.008', 'T1548.003'],
      windowMs: HOUR_MS,
      description: 'A security-sensitive file changed (/etc/passwd, /etc/shadow, sudoers, SSH authorized_keys, ...).',
    },
    'host.persistence': {
      severity: 'medium',
      mitre: ['T1053.003', 'T1547.006', 'T1205'],
      windowMs: HOUR_MS,
      description: 'A way to survive reboots or come back later was added: a cron job, a new listening port or a kernel module.',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    const subject = hostSubject(f);
    if (f.type === 'server.log.cleared' || f.type === 'server.log.tampered') {
      ctx.raise('host.log_tampering', subject, { action: f.type, path: textOf(f.event.metadata, PATH_KEYS) ?? null });
      return;
    }
    if (PERSISTENCE_TYPES.has(f.type)) {
      ctx.raise('host.persistence', subject, {
        mechanism: f.type,
        detail: textOf(f.event.metadata, ['command', 'schedule', 'port', 'module', 'name', ...PATH_KEYS]) ?? f.event.metadata.port ?? null,
      });
      return;
    }
    if (!FILE_CHANGE_TYPES.has(f.type)) return;
    const path = textOf(f.event.metadata, PATH_KEYS);
    if (path === undefined) return;
    if (isSensitivePath(path)) ctx.raise('host.sensitive_file_change', subject, { path, action: f.type });
    else if (f.type !== 'server.file.deleted' && isPersistencePath(path)) ctx.raise('host.persistence', subject, { mechanism: 'startup_or_cron_file', path });
  },
});
