import { useState } from 'preact/hooks';
import { ApiFailure, call, type Role, type Session } from '../api';
import { FormError, Loading, useLoad } from '../ui';

const messageOf = (err: unknown): string => (err instanceof ApiFailure ? err.message : 'The service did not answer.');

/** Accepting an invitation: the person chooses their password (or gives theirs) and is signed in. */
export function AcceptInvitation({ token, onSignedIn }: { token: string; onSignedIn: (s: Session) => void }) {
  const path = `/dashboard/api/invitations/${encodeURIComponent(token)}`;
  const invitation = useLoad(() => call<{ email: string; role: Role; account: { name: string }; existing_person?: boolean }>('GET', path), [token]);
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    const name = String(data.get('name') ?? '').trim();
    setError('');
    try {
      const session = await call<Session>('POST', `${path}/accept`, { ...(name ? { name } : {}), password: String(data.get('password')) });
      location.hash = '#/';
      onSignedIn(session);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const i = invitation.data;
  return (
    <main class="signin">
      <h1>Join Vigil</h1>
      <Loading error={invitation.error && 'This invitation link is not valid any more: it was used, withdrawn or has expired. Ask for a new one.'}>
        {i && (
          <form onSubmit={submit}>
            <p>
              You are invited to <strong>{i.account.name}</strong> as {i.role}, with the email {i.email}.
            </p>
            {!i.existing_person && (
              <>
                <label for="name">Your name</label>
                <input id="name" name="name" autocomplete="name" maxLength={100} />
              </>
            )}
            <label for="password">{i.existing_person ? 'Your password' : 'Choose a password (at least 10 characters)'}</label>
            <input
              id="password"
              name="password"
              type="password"
              autocomplete={i.existing_person ? 'current-password' : 'new-password'}
              required
              minLength={10}
            />
            <FormError error={error} />
            <button type="submit">Accept the invitation</button>
          </form>
        )}
      </Loading>
    </main>
  );
}

/** Asking for a password reset link: the answer is the same whether the email is known or not. */
export function ForgotPassword() {
  const [sent, setSent] = useState(false);
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      await call('POST', '/dashboard/api/password-reset', { email: String(new FormData(e.currentTarget as HTMLFormElement).get('email')).trim() });
      setSent(true);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <main class="signin">
      <h1>Reset your password</h1>
      {sent ? (
        <p role="status">If a person with this email exists, a reset link is on its way (or with your operator, when this service sends no mail).</p>
      ) : (
        <form onSubmit={submit}>
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required />
          <FormError error={error} />
          <button type="submit">Send a reset link</button>
        </form>
      )}
      <p>
        <a href="#/">Back to sign-in</a>
      </p>
    </main>
  );
}

/** Choosing a new password from a reset link; every session of the person ends. */
export function ResetPassword({ token }: { token: string }) {
  const [done, setDone] = useState(false);
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      await call('POST', `/dashboard/api/password-reset/${encodeURIComponent(token)}`, {
        password: String(new FormData(e.currentTarget as HTMLFormElement).get('password')),
      });
      setDone(true);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <main class="signin">
      <h1>Choose a new password</h1>
      {done ? (
        <p role="status">
          Your password was changed and your sessions ended. <a href="#/">Sign in</a>.
        </p>
      ) : (
        <form onSubmit={submit}>
          <label for="password">New password (at least 10 characters)</label>
          <input id="password" name="password" type="password" autocomplete="new-password" required minLength={10} />
          <FormError error={error} />
          <button type="submit">Set the password</button>
        </form>
      )}
    </main>
  );
}
