import type { FastifyRequest } from 'fastify';
import { actorOf, type AuditOrigin } from '../audit/trail.js';
import { requestAccount } from './context.js';

/** Who made this authenticated request, from where: the origin of the audit entries it writes. */
export function auditOrigin(request: FastifyRequest): AuditOrigin {
  const ctx = requestAccount(request);
  const agent = request.headers['user-agent'];
  return { accountId: ctx.account.id, actor: actorOf(ctx.principal), ip: request.ip, userAgent: typeof agent === 'string' ? agent : null };
}
