import type { FastifyRequest } from 'fastify';
import { actorOf, ADMIN_API_OPERATOR, type AuditOrigin } from '../audit/trail.js';
import type { ChangeOrigin } from '../accounts/accounts.js';
import { requestAccount } from './context.js';

/** The request's user agent as Vigil keeps it (sessions, audit entries): at most 256 characters. */
export const userAgentOf = (request: FastifyRequest): string | null => {
  const agent = request.headers['user-agent'];
  return typeof agent === 'string' ? agent.slice(0, 256) : null;
};

/** Who made this authenticated request, from where: the origin of the audit entries it writes. */
export function auditOrigin(request: FastifyRequest): AuditOrigin {
  const ctx = requestAccount(request);
  return { accountId: ctx.account.id, actor: actorOf(ctx.principal), ip: request.ip, userAgent: userAgentOf(request) };
}

/** The operator calling the admin API, from where: its token names no person. */
export function adminOrigin(request: FastifyRequest): ChangeOrigin {
  return { actor: ADMIN_API_OPERATOR, ip: request.ip, userAgent: userAgentOf(request) };
}
