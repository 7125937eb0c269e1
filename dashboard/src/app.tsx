import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, currentSession, signIn, signInOptions, signInWithPassword, signOut, useSession, type Session } from './api';
import { useRoute } from './router';
import { Loading } from './ui';
import { AlertPage, AlertsView } from './views/alerts';
import { EventPage, EventsView } from './views/events';
import { OverviewView } from './views/overview';
import { SettingsView } from './views/settings';
import { UsageView } from './views/usage';

const NAV = [
  ['/', 'Overview'],
  ['/events', 'Events'],
  ['/alerts', 'Alerts'],
  ['/usage', 'Usage'],
  ['/settings', 'Settings'],
  ['/threat-models', 'Threat models'],
] as const;

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useSession(session ?? null, () => setSession(null));
  useEffect(() => {
    currentSession().then(setSession, () => setSession(null));
  }, []);
  if (session === undefined) return <p aria-busy="true">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  return <Shell session={session} onSignedOut={() => setSession(null)} />;
}

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [keySignIn, setKeySignIn] = useState(false);
  useEffect(() => {
    signInOptions()
      .then((o) => setKeySignIn(o.key_sign_in))
      .catch(() => setKeySignIn(false));
  }, []);
  return (
    <main class="signin">
      <h1>Vigil</h1>
      <PasswordSignIn onSignedIn={onSignedIn} />
      {keySignIn && <KeySignIn onSignedIn={onSignedIn} />}
    </main>
  );
}

/** Runs a sign-in call with the form's busy state and error line. */
function useSignInForm(onSignedIn: (s: Session) => void) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const run = async (call: () => Promise<Session>, clear: () => void) => {
    setBusy(true);
    setError('');
    try {
      const session = await call();
      clear();
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : 'The service did not answer.');
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

function FormError({ error }: { error: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

function PasswordSignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const { error, busy, run } = useSignInForm(onSignedIn);
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const email = form.elements.namedItem('email') as HTMLInputElement;
    const password = form.elements.namedItem('password') as HTMLInputElement;
    void run(
      () => signInWithPassword(email.value, password.value),
      () => (password.value = ''),
    );
  };
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
        <nav aria-label="Sections">
          <ul>
            {NAV.map(([path, label]) => (
              <li key={path}>
                <a href={`#${path}`} aria-current={section === path ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          {session.account.name} · {session.account.plan}
        </span>
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

type ThreatModelsModule = typeof import('./views/threat-models');

/** The threat-model views load when first opened: most visits never need the editor. */
function ThreatModels(props: { id?: string; params: URLSearchParams }) {
  const [module, setModule] = useState<ThreatModelsModule | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    import('./views/threat-models').then(setModule, () => setError('The threat-model views did not load; reload the page.'));
  }, []);
  return module ? <module.ThreatModelsView {...props} /> : <Loading error={error} />;
}

function View({ path, params }: { path: string; params: URLSearchParams }) {
  const [, section, id] = path.split('/');
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
      return <ThreatModels id={id === undefined ? undefined : decodeURIComponent(id)} params={params} />;
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
