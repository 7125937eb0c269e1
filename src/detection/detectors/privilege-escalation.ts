import type { Detector } from '../detector.js';
import { primarySubject } from '../facts.js';
import { isAdminLike, NEW_ROLE_KEYS, OLD_ROLE_KEYS, textOf } from '../metadata.js';
import { isRoleChange } from './session-anomaly.js';

/**
 * privilege.escalation: a role change to an admin-like role (admin, owner, root, superuser),
 * unless the actor already held one; privilege.impersonation: an admin acting as another user.
 */
export const privilegeEscalation: Detector = {
  name: 'privilege_escalation',
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
};
