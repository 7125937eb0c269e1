import { useState } from 'preact/hooks';
import { ApiFailure, call, ROLES, type Invitation, type Member, type Role, type SessionInfo } from '../api';
import { Table, type Column } from '../list';
import { useSessionInfo } from '../session';
import { Card, fmtTime, FormError, Loading, useLoad } from '../ui';

const messageOf = (err: unknown): string => (err instanceof ApiFailure || err instanceof Error ? err.message : String(err));

/** Runs a change and keeps its outcome line: what was done, or the service's refusal. */
function useChange() {
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const run = async (change: () => Promise<string>) => {
    setError('');
    setDone('');
    try {
      setDone(await change());
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const outcome = (
    <>
      <FormError error={error} />
      <p role="status" class="ok">
        {done}
      </p>
    </>
  );
  return { run, outcome };
}

/** The account's people: their roles, invitations and sessions (admins and owners). */
export function TeamView() {
  const session = useSessionInfo();
  const team = useLoad(() => call<{ members: Member[]; invitations: Invitation[] }>('GET', '/v1/members'), []);
  const { run, outcome } = useChange();
  const ownerHere = session?.member?.role === 'owner';
  const grantable = ROLES.filter((r) => r !== 'owner' || ownerHere);
  const setRole = (m: Member, role: Role) =>
    run(async () => {
      await call('PATCH', `/v1/members/${encodeURIComponent(m.id)}`, { role });
      team.reload();
      return `${m.email} is now ${role}.`;
    });
  const remove = (m: Member) =>
    run(async () => {
      await call('DELETE', `/v1/members/${encodeURIComponent(m.id)}`);
      team.reload();
      return `${m.email} was removed; their sessions in this account ended.`;
    });
  const withdraw = (i: Invitation) =>
    run(async () => {
      await call('DELETE', `/v1/invitations/${encodeURIComponent(i.id)}`);
      team.reload();
      return `The invitation of ${i.email} was withdrawn.`;
    });
  const columns: readonly Column<Member>[] = [
    { label: 'Person', cell: (m) => `${m.name} <${m.email}>` },
    {
      label: 'Role',
      cell: (m) =>
        m.id === session?.member?.id || (m.role === 'owner' && !ownerHere) ? (
          m.role
        ) : (
          <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => void setRole(m, e.currentTarget.value as Role)}>
            {grantable.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        ),
    },
    { label: 'Sign-in', cell: (m) => [m.sso ? 'single sign-on' : 'password', m.totp ? ' + authenticator' : ''].join('') },
    { label: 'Last sign-in', cell: (m) => (m.last_sign_in_at ? fmtTime(m.last_sign_in_at) : 'never') },
    {
      label: 'Actions',
      cell: (m) =>
        m.id === session?.member?.id ? (
          <a href="#/account">Your account</a>
        ) : (
          <span class="actions">
            <a href={`#/team/${encodeURIComponent(m.id)}`}>Sessions</a>
            <button type="button" class="secondary small" onClick={() => void remove(m)}>
              Remove <span class="visually-hidden">{m.email}</span>
            </button>
          </span>
        ),
    },
  ];
  return (
    <>
      <h1>Team</h1>
      {outcome}
      <Loading error={team.error}>
        {team.data && (
          <div class="grid">
            <Card title="Members" wide>
              <Table caption="Members of this account" columns={columns} rows={team.data.members} />
            </Card>
            <InviteForm roles={grantable} onInvited={team.reload} />
            <Card title="Pending invitations">
              {team.data.invitations.length === 0 ? (
                <p class="muted">No pending invitation.</p>
              ) : (
                <ul class="plain">
                  {team.data.invitations.map((i) => (
                    <li key={i.id}>
                      {i.email} as {i.role}, until {fmtTime(i.expires_at)}{' '}
                      <button type="button" class="secondary small" onClick={() => void withdraw(i)}>
                        Withdraw <span class="visually-hidden">the invitation of {i.email}</span>
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </Card>
          </div>
        )}
      </Loading>
    </>
  );
}

function InviteForm({ roles, onInvited }: { roles: readonly Role[]; onInvited: () => void }) {
  const [sent, setSent] = useState<Invitation | undefined>();
  const { run, outcome } = useChange();
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void run(async () => {
      const invitation = await call<Invitation>('POST', '/v1/invitations', { email: String(data.get('email')).trim(), role: String(data.get('role')) });
      setSent(invitation);
      form.reset();
      onInvited();
      return invitation.emailed ? `An invitation was mailed to ${invitation.email}.` : `Invitation for ${invitation.email} created.`;
    });
  };
  const link = sent?.link === undefined ? undefined : new URL(sent.link, location.href).href;
  return (
    <Card title="Invite someone">
      <form onSubmit={submit} class="stack">
        <label for="invite-email">Their email</label>
        <input id="invite-email" name="email" type="email" required maxLength={254} />
        <label for="invite-role">Role</label>
        <select id="invite-role" name="role" defaultValue="viewer">
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        {outcome}
        {link && (
          <p>
            Send them this single-use link (valid until {fmtTime(sent?.expires_at ?? '')}):{' '}
            <input aria-label="Invitation link" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
          </p>
        )}
        <button type="submit">Invite</button>
      </form>
    </Card>
  );
}

const sessionColumns = (revoke: (s: SessionInfo) => void): readonly Column<SessionInfo>[] => [
  { label: 'Signed in', cell: (s) => fmtTime(s.created_at) },
  { label: 'How', cell: (s) => s.method },
  { label: 'From', cell: (s) => <span class="mono">{s.ip ?? '—'}</span> },
  { label: 'Browser', cell: (s) => <span class="small">{s.user_agent ?? '—'}</span> },
  { label: 'Last seen', cell: (s) => fmtTime(s.last_seen_at) },
  {
    label: 'End',
    cell: (s) =>
      s.current ? (
        'this session'
      ) : (
        <button type="button" class="secondary small" onClick={() => revoke(s)}>
          Revoke <span class="visually-hidden">the session from {s.ip}</span>
        </button>
      ),
  },
];

/** A member's live sessions, which an admin may end one by one. */
export function MemberSessionsView({ userId }: { userId: string }) {
  const base = `/v1/members/${encodeURIComponent(userId)}/sessions`;
  const sessions = useLoad(() => call<{ sessions: SessionInfo[] }>('GET', base), [userId]);
  const { run, outcome } = useChange();
  const revoke = (s: SessionInfo) =>
    void run(async () => {
      await call('DELETE', `${base}/${encodeURIComponent(s.id)}`);
      sessions.reload();
      return 'The session was revoked.';
    });
  return (
    <>
      <p>
        <a href="#/team">← Team</a>
      </p>
      <h1>Sessions</h1>
      {outcome}
      <Loading error={sessions.error}>
        {sessions.data &&
          (sessions.data.sessions.length === 0 ? (
            <p class="muted">No live session.</p>
          ) : (
            <Table caption="Live sessions" columns={sessionColumns(revoke)} rows={sessions.data.sessions} />
          ))}
      </Loading>
    </>
  );
}

/** The signed-in person's own account: sessions, the second factor and the password. */
export function AccountView() {
  const session = useSessionInfo();
  const me = useLoad(() => call<Member>('GET', '/v1/me'), []);
  const sessions = useLoad(() => call<{ sessions: SessionInfo[] }>('GET', '/v1/me/sessions'), []);
  const { run, outcome } = useChange();
  if (!session?.member) return <p>This session was opened with an API key; sign in as a person to manage your account.</p>;
  const revoke = (s: SessionInfo) =>
    void run(async () => {
      await call('DELETE', `/v1/me/sessions/${encodeURIComponent(s.id)}`);
      sessions.reload();
      return 'The session was revoked.';
    });
  return (
    <>
      <h1>Your account</h1>
      {outcome}
      <div class="grid">
        <Card title="Sessions" wide>
          <Loading error={sessions.error}>
            {sessions.data && <Table caption="Your live sessions" columns={sessionColumns(revoke)} rows={sessions.data.sessions} />}
          </Loading>
        </Card>
        <Loading error={me.error}>{me.data && <SecondFactor enabled={me.data.totp} onChanged={me.reload} />}</Loading>
        <PasswordForm />
      </div>
    </>
  );
}

function SecondFactor({ enabled, onChanged }: { enabled: boolean; onChanged: () => void }) {
  const [pending, setPending] = useState<{ secret: string; otpauth_uri: string } | undefined>();
  const [codes, setCodes] = useState<readonly string[]>([]);
  const { run, outcome } = useChange();
  const start = () =>
    void run(async () => {
      setPending(await call<{ secret: string; otpauth_uri: string }>('POST', '/v1/me/totp'));
      return '';
    });
  const confirm = (e: Event) => {
    e.preventDefault();
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code')).trim();
    void run(async () => {
      const answer = await call<{ recovery_codes: string[] }>('POST', '/v1/me/totp/confirm', { code });
      setPending(undefined);
      setCodes(answer.recovery_codes);
      onChanged();
      return 'Authenticator codes are now required when you sign in.';
    });
  };
  const disable = (e: Event) => {
    e.preventDefault();
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code')).trim();
    void run(async () => {
      await call('DELETE', '/v1/me/totp', { code });
      onChanged();
      return 'Authenticator codes are no longer required.';
    });
  };
  return (
    <Card title="Two-factor authentication">
      {outcome}
      {codes.length > 0 && (
        <div>
          <p>Recovery codes, each usable once if you lose the authenticator. They are shown only now:</p>
          <ul class="plain mono" aria-label="Recovery codes">
            {codes.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
        </div>
      )}
      {enabled ? (
        <form onSubmit={disable} class="stack">
          <p>Sign-in asks for a code from your authenticator app.</p>
          <label>
            Current code, to turn it off
            <input name="code" inputMode="numeric" autocomplete="one-time-code" required maxLength={12} />
          </label>
          <button type="submit" class="secondary">
            Turn off two-factor authentication
          </button>
        </form>
      ) : pending ? (
        <form onSubmit={confirm} class="stack">
          <p>
            Add this key to your authenticator app (or open the link on your phone):{' '}
            <code data-testid="totp-secret" class="mono">
              {pending.secret}
            </code>{' '}
            <a href={pending.otpauth_uri}>otpauth link</a>
          </p>
          <label>
            Code from the app
            <input name="code" inputMode="numeric" autocomplete="one-time-code" required maxLength={6} />
          </label>
          <button type="submit">Turn on</button>
        </form>
      ) : (
        <>
          <p>Sign-in asks only for your password.</p>
          <button type="button" onClick={start}>
            Set up an authenticator app
          </button>
        </>
      )}
    </Card>
  );
}

function PasswordForm() {
  const { run, outcome } = useChange();
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void run(async () => {
      await call('POST', '/v1/me/password', { current_password: String(data.get('current')), new_password: String(data.get('new')) });
      form.reset();
      return 'Password changed; your other sessions ended.';
    });
  };
  return (
    <Card title="Password">
      <form onSubmit={submit} class="stack">
        <label>
          Current password
          <input name="current" type="password" autocomplete="current-password" required />
        </label>
        <label>
          New password
          <input name="new" type="password" autocomplete="new-password" required minLength={10} maxLength={200} />
        </label>
        {outcome}
        <button type="submit">Change password</button>
      </form>
    </Card>
  );
}
