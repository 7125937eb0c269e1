import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, currentSession, signIn, signOut, useSession, type Session } from './api';
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
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('key') as HTMLInputElement;
    setBusy(true);
    setError('');
    try {
      const session = await signIn(input.value);
      input.value = '';
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : 'The service did not answer.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Vigil</h1>
      <form onSubmit={submit} aria-describedby="signin-help">
        <label for="key">Secret API key</label>
        <input id="key" name="key" type="password" autocomplete="off" spellcheck={false} required />
        <p id="signin-help" class="hint">
          The key is exchanged for a session cookie and is not stored in the browser.
        </p>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
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
