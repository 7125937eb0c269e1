import type { FastifyRequest } from 'fastify';
import { actorOf, ADMIN_API_OPERATOR, type AuditOrigin } from '../audit/trail.js';
import type { ChangeOrigin } from '../accounts/accounts.js';
import { requestAccount } from './context.js';

/** Who made this authenticated request, from where: the origin of the audit entries it writes. */
export function auditOrigin(request: FastifyRequest): AuditOrigin {
  const ctx = requestAccount(request);
  const agent = request.headers['user-agent'];
  return { accountId: ctx.account.id, actor: actorOf(ctx.principal), ip: request.ip, userAgent: typeof agent === 'string' ? agent : null };
}

/** The operator calling the admin API, from where: its token names no person. */
export function adminOrigin(request: FastifyRequest): ChangeOrigin {
  const agent = request.headers['user-agent'];
  return { actor: ADMIN_API_OPERATOR, ip: request.ip, userAgent: typeof agent === 'string' ? agent : null };
}
