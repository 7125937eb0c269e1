import { HOUR_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';
import { primarySubject } from '../facts.js';
import { isAdminLike, NEW_ROLE_KEYS, OLD_ROLE_KEYS, textOf } from '../metadata.js';
import { isRoleChange } from './session-anomaly.js';

/**
 * privilege.escalation: a role change to an admin-like role (admin, owner, root, superuser),
 * unless the actor already held one; privilege.impersonation: an admin acting as another user.
 */
export const privilegeEscalation = defineDetector({
  name: 'privilege_escalation',
  families: ['privilege', 'admin', 'account'],
  description: 'Role changes to an admin-like role (admin, owner, root, superuser) and impersonation.',
  alerts: {
    'privilege.escalation': {
      severity: 'high',
      mitre: ['T1098', 'T1078.003'],
      windowMs: HOUR_MS,
      description: 'A user was given an administrator-like role (admin, owner, root, superuser). Confirm the change was approved.',
    },
    'privilege.impersonation': {
      severity: 'medium',
      mitre: ['T1078', 'T1134'],
      windowMs: HOUR_MS,
      description: 'An administrator started acting as another user. Legitimate for support, but worth recording and reviewing.',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    if (f.type === 'admin.user.impersonated') {
      ctx.raise('privilege.impersonation', primarySubject(f), {
        target: f.event.metadata.target_user ?? f.event.metadata.target ?? f.event.metadata.impersonated ?? null,
      });
      return;
    }
    if (!isRoleChange(f) || f.type === 'admin.role.deleted') return;
    const meta = f.event.metadata;
    const role = textOf(meta, NEW_ROLE_KEYS);
    if (role === undefined || !isAdminLike(role)) return;
    const previous = textOf(meta, OLD_ROLE_KEYS);
    if (previous !== undefined && isAdminLike(previous)) return;
    ctx.raise('privilege.escalation', primarySubject(f), { role, previous_role: previous ?? null, changed_by: meta.changed_by ?? meta.by ?? null });
  },
});
