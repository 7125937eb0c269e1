import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { AuditTrail, CLI_OPERATOR } from '../../src/audit/trail.js';
import type { AuditEntry } from '../../src/storage/types.js';
import { Members } from '../../src/team/members.js';
import type { TestApp } from '../helpers/app.js';

export const PASSWORD = 'correct horse battery staple 7';

export interface Session {
  readonly cookie: string;
  readonly csrf: string;
  /** A request with this session's cookie (and CSRF token). */
  call(method: InjectOptions['method'], url: string, payload?: object): Promise<LightMyRequestResponse>;
}

/** Signs people in and calls the API as them: scrypt is slow, so tests create their people once. */
export function team(t: () => TestApp) {
  const app = () => t().vigil.app;
  const sessionOf = (res: LightMyRequestResponse): Session => {
    expect(res.statusCode, res.body).toBe(201);
    const cookie = String(res.headers['set-cookie']).split(';')[0] as string;
    const csrf = res.json<{ csrf_token: string }>().csrf_token;
    return {
      cookie,
      csrf,
      call: (method, url, payload) => app().inject({ method, url, headers: { cookie, 'x-csrf-token': csrf }, ...(payload ? { payload } : {}) }),
    };
  };
  return {
    sessionOf,
    async add(accountId: string, email: string, role: string, password = PASSWORD): Promise<string> {
      const members = new Members(t().services.store, new AuditTrail(t().services.store.audit, t().clock), t().clock);
      const added = await members.add({ accountId, actor: CLI_OPERATOR, ip: null, userAgent: null }, { email, role, password });
      if (!added.ok) throw new Error(added.message);
      return added.value.user.id;
    },
    signIn: (email: string, password = PASSWORD, ip = '127.0.0.1') =>
      app().inject({ method: 'POST', url: '/dashboard/api/sign-in', payload: { email, password }, remoteAddress: ip }),
    async session(email: string, password = PASSWORD): Promise<Session> {
      return sessionOf(await this.signIn(email, password));
    },
    /** Every audit entry of the account (and the instance's, account ''), oldest first. */
    async entries(accountId: string, action?: string): Promise<AuditEntry[]> {
      const store = t().services.store.audit;
      const filter = action === undefined ? {} : { action };
      const all = [...(await store.list(accountId, filter, 500)).items, ...(accountId === '' ? [] : (await store.list('', filter, 500)).items)];
      return all.sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
    },
  };
}
