import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ApiFailure,
  can,
  currentSession,
  signIn,
  signInOptions,
  signInSecondFactor,
  signInWithPassword,
  signOut,
  startSingleSignOn,
  useSession,
  type Ability,
  type Session,
} from './api';
import { lazy } from './lazy';
import { quoted } from './links';
import { useRoute } from './router';
import { SessionContext } from './session';
import { FormError } from './ui';

// Every view loads when first opened: the first load is the shell and the sign-in.
const OverviewView = lazy(() => import('./views/overview'), 'OverviewView');
const EventsView = lazy(() => import('./views/events'), 'EventsView');
const EventPage = lazy(() => import('./views/event-page'), 'EventPage');
const AlertsView = lazy(() => import('./views/alerts'), 'AlertsView');
const AlertPage = lazy(() => import('./views/alert-page'), 'AlertPage');
const EntityView = lazy(() => import('./views/entity'), 'EntityView');
const UsageView = lazy(() => import('./views/usage'), 'UsageView');
const SettingsView = lazy(() => import('./views/settings'), 'SettingsView');
const ThreatModelsView = lazy(() => import('./views/threat-models'), 'ThreatModelsView');
const TeamView = lazy(() => import('./views/team'), 'TeamView');
const MemberSessionsView = lazy(() => import('./views/team'), 'MemberSessionsView');
const AccountView = lazy(() => import('./views/team'), 'AccountView');
const AuditView = lazy(() => import('./views/audit'), 'AuditView');
const KeysView = lazy(() => import('./views/keys'), 'KeysView');
const WebhooksView = lazy(() => import('./views/webhooks'), 'WebhooksView');
const PrivacyView = lazy(() => import('./views/privacy'), 'PrivacyView');
const AcceptInvitation = lazy(() => import('./views/welcome'), 'AcceptInvitation');
const ResetPassword = lazy(() => import('./views/welcome'), 'ResetPassword');
const ForgotPassword = lazy(() => import('./views/welcome'), 'ForgotPassword');

/** The sections, each with what a session needs to see it in the navigation (the service checks again). */
const NAV: readonly (readonly [string, string, Ability?])[] = [
  ['/', 'Overview'],
  ['/events', 'Events'],
  ['/alerts', 'Alerts'],
  ['/usage', 'Usage'],
  ['/settings', 'Settings'],
  ['/threat-models', 'Threat models'],
  ['/webhooks', 'Webhooks'],
  ['/privacy', 'Privacy'],
  ['/keys', 'API keys', 'manage'],
  ['/team', 'Team', 'people'],
  ['/audit', 'Audit trail'],
];

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useSession(session ?? null, () => setSession(null));
  useEffect(() => {
    currentSession().then(setSession, () => setSession(null));
  }, []);
  if (session === undefined) return <p aria-busy="true">Loading…</p>;
  if (session === null) return <SignedOut onSignedIn={setSession} />;
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} onSignedOut={() => setSession(null)} />
    </SessionContext.Provider>
  );
}

/** Without a session: an invitation or reset link opens its own page, anything else the sign-in. */
function SignedOut({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [, section, token] = useRoute().path.split('/');
  if (section === 'accept' && token) return <AcceptInvitation token={decodeURIComponent(token)} onSignedIn={onSignedIn} />;
  if (section === 'reset' && token) return <ResetPassword token={decodeURIComponent(token)} />;
  if (section === 'forgot') return <ForgotPassword />;
  return <SignIn onSignedIn={onSignedIn} />;
}

/** Why single sign-on sent the browser back (`#/sign-in?error=…`), in the person's words. */
const SSO_ERRORS: Readonly<Record<string, string>> = {
  sso_state: 'The single sign-on took too long or its link was used already; start again.',
  sso_provider: 'The identity provider refused the sign-in, or its answer did not check out.',
  sso_unavailable: 'The identity provider cannot be reached; retry shortly.',
  sso_email_unverified: 'Your identity provider has not verified your email address.',
  sso_domain: 'Your email domain may not sign in here.',
  sso_role: 'Your groups at the identity provider give you no role here; ask an admin to add you.',
  sso_not_configured: 'Single sign-on is not set up here.',
  rate_limited: 'Too many sign-in attempts; retry in a minute.',
};

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const { params } = useRoute();
  // An account's own single sign-on is offered from its link: #/sign-in?account=acc_…
  const account = params.get('account') ?? undefined;
  const [options, setOptions] = useState({ key_sign_in: false, sso: false });
  useEffect(() => {
    signInOptions(account)
      .then(setOptions)
      .catch(() => setOptions({ key_sign_in: false, sso: false }));
  }, [account]);
  const ssoError = params.get('error');
  // Signed in from the sign-in link, the dashboard opens on the overview rather than on that link.
  const signedIn = (s: Session) => {
    if (location.hash.startsWith('#/sign-in')) history.replaceState(null, '', '#/');
    onSignedIn(s);
  };
  return (
    <main class="signin">
      <h1>Vigil</h1>
      {ssoError && <FormError error={SSO_ERRORS[ssoError] ?? 'Single sign-on failed.'} />}
      {options.sso && <SingleSignOn account={account} />}
      <PasswordSignIn onSignedIn={signedIn} />
      {options.key_sign_in && <KeySignIn onSignedIn={signedIn} />}
    </main>
  );
}

/** Leaves for the identity provider's page; the provider sends the browser back signed in (or with an error). */
function SingleSignOn({ account }: { account: string | undefined }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const start = async () => {
    setBusy(true);
    setError('');
    try {
      location.assign((await startSingleSignOn(account)).redirect);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : 'The service did not answer.');
      setBusy(false);
    }
  };
  return (
    <div class="sso">
      <FormError error={error} />
      <button type="button" disabled={busy} onClick={() => void start()}>
        Sign in with single sign-on
      </button>
    </div>
  );
}

/** Runs a sign-in call with the form's busy state and error line. */
function useSignInForm<T>(onAnswer: (answer: T) => void) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const run = async (call: () => Promise<T>, clear: () => void) => {
    setBusy(true);
    setError('');
    try {
      const answer = await call();
      clear();
      onAnswer(answer);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : 'The service did not answer.');
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

function PasswordSignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [mfaToken, setMfaToken] = useState('');
  const { error, busy, run } = useSignInForm((answer: Session | null) => answer && onSignedIn(answer));
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const email = form.elements.namedItem('email') as HTMLInputElement;
    const password = form.elements.namedItem('password') as HTMLInputElement;
    void run(
      async () => {
        const answer = await signInWithPassword(email.value, password.value);
        if (!('mfa_required' in answer)) return answer;
        setMfaToken(answer.mfa_token);
        return null;
      },
      () => (password.value = ''),
    );
  };
  if (mfaToken) return <SecondFactorSignIn mfaToken={mfaToken} onSignedIn={onSignedIn} />;
  return (
    <form onSubmit={submit}>
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" spellcheck={false} required />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      <FormError error={error} />
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      <p class="small">
        <a href="#/forgot">Forgot your password?</a>
      </p>
    </form>
  );
}

/** The second step of a sign-in with two-factor authentication: a code from the app, or a recovery code. */
function SecondFactorSignIn({ mfaToken, onSignedIn }: { mfaToken: string; onSignedIn: (s: Session) => void }) {
  const [recovery, setRecovery] = useState(false);
  const { error, busy, run } = useSignInForm(onSignedIn);
  const submit = (e: Event) => {
    e.preventDefault();
    const input = (e.currentTarget as HTMLFormElement).elements.namedItem('code') as HTMLInputElement;
    const value = input.value.trim();
    void run(
      () => signInSecondFactor(mfaToken, recovery ? { recovery_code: value } : { code: value }),
      () => (input.value = ''),
    );
  };
  return (
    <form onSubmit={submit}>
      <label for="code">{recovery ? 'Recovery code' : 'Authentication code'}</label>
      <input
        id="code"
        name="code"
        key={String(recovery)}
        inputMode={recovery ? 'text' : 'numeric'}
        autocomplete="one-time-code"
        spellcheck={false}
        required
        maxLength={32}
      />
      <FormError error={error} />
      <button type="submit" disabled={busy}>
        Verify
      </button>
      <button type="button" class="secondary" onClick={() => setRecovery(!recovery)}>
        {recovery ? 'Use the authenticator app' : 'Use a recovery code'}
      </button>
    </form>
  );
}

function KeySignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const { error, busy, run } = useSignInForm(onSignedIn);
  const submit = (e: Event) => {
    e.preventDefault();
    const input = (e.currentTarget as HTMLFormElement).elements.namedItem('key') as HTMLInputElement;
    void run(
      () => signIn(input.value),
      () => (input.value = ''),
    );
  };
  return (
    <form onSubmit={submit} aria-describedby="signin-help">
      <label for="key">Secret API key</label>
      <input id="key" name="key" type="password" autocomplete="off" spellcheck={false} required />
      <p id="signin-help" class="hint">
        The key is exchanged for a session cookie and is not stored in the browser.
      </p>
      <FormError error={error} />
      <button type="submit" disabled={busy}>
        Sign in with the key
      </button>
    </form>
  );
}

function Shell({ session, onSignedOut }: { session: Session; onSignedOut: () => void }) {
  const route = useRoute();
  const section = `/${route.path.split('/')[1] ?? ''}`;
  const firstView = useRef(true);
  useEffect(() => {
    const title = NAV.find(([path]) => path === section)?.[1] ?? 'Vigil';
    document.title = `${title} · Vigil`;
    // After navigating, focus moves to the new view (screen readers announce it); not on first load.
    if (!firstView.current) document.getElementById('main')?.focus({ preventScroll: true });
    firstView.current = false;
  }, [route.path]);
  const out = async () => {
    try {
      await signOut();
    } finally {
      onSignedOut();
    }
  };
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Vigil</span>
        <div class="strip">
          <nav aria-label="Sections">
            <ul>
              {NAV.filter(([, , ability]) => ability === undefined || can(session, ability)).map(([path, label]) => (
                <li key={path}>
                  <a href={`#${path}`} aria-current={section === path ? 'page' : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <span class="who">
            {session.member && (
              <>
                <a href="#/account" aria-current={section === '/account' ? 'page' : undefined}>
                  {session.member.email}
                </a>{' '}
                ({session.member.role}) ·{' '}
              </>
            )}
            {session.account.name} · {session.account.plan}
          </span>
        </div>
        <button type="button" class="secondary" onClick={out}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <View path={route.path} params={route.params} />
      </main>
    </>
  );
}

function View({ path, params }: { path: string; params: URLSearchParams }) {
  const [, section, id] = path.split('/');
  if ((section === 'actor' || section === 'ip' || section === 'host') && id) return <EntityView kind={section} id={decodeURIComponent(id)} params={params} />;
  // A session is the events list searched by it.
  if (section === 'session' && id) return <EventsView params={new URLSearchParams({ q: `session_id:${quoted(decodeURIComponent(id))}` })} />;
  switch (section) {
    case '':
    case undefined:
      return <OverviewView />;
    case 'events':
      return id ? <EventPage id={decodeURIComponent(id)} /> : <EventsView params={params} />;
    case 'alerts':
      return id ? <AlertPage id={decodeURIComponent(id)} /> : <AlertsView params={params} />;
    case 'usage':
      return <UsageView />;
    case 'settings':
      return <SettingsView />;
    case 'threat-models':
      return <ThreatModelsView id={id === undefined ? undefined : decodeURIComponent(id)} params={params} />;
    case 'team':
      return id ? <MemberSessionsView userId={decodeURIComponent(id)} /> : <TeamView />;
    case 'audit':
      return <AuditView params={params} />;
    case 'account':
      return <AccountView />;
    case 'keys':
      return <KeysView />;
    case 'webhooks':
      return <WebhooksView id={id === undefined ? undefined : decodeURIComponent(id)} />;
    case 'privacy':
      return <PrivacyView params={params} />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            No view at {path}. <a href="#/">Back to the overview</a>.
          </p>
        </>
      );
  }
}
