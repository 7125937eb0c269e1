import { useState } from 'preact/hooks';
import { ApiFailure, call, type ApiKey } from '../api';
import { useCan, useSessionInfo } from '../session';
import { Card, fmtTime, FormError, Loading, NewSecret, useLoad } from '../ui';

const SCOPES: readonly (readonly [string, string])[] = [
  ['ingest', 'ingest: send events'],
  ['read', 'read: read events, alerts and usage'],
  ['manage', 'manage: change settings, keys, webhooks and threat models'],
];

const failure = (err: unknown) => (err instanceof ApiFailure ? err.message : String(err));
const scopesOf = (form: HTMLFormElement) => new FormData(form).getAll('scopes').map(String);

/**
 * The account's API keys, for a role that manages them (the navigation hides the view from the
 * others, but a link or a typed address still leads here): the others see why there is nothing,
 * and the service refuses their calls anyway.
 */
export function KeysView() {
  const role = useSessionInfo()?.member?.role;
  if (useCan('manage')) return <ManageKeys />;
  return (
    <>
      <h1>API keys</h1>
      <p class="muted">{role === undefined ? 'This session does not manage API keys.' : `Your role (${role}) does not manage API keys; an admin does.`}</p>
    </>
  );
}

/** The account's API keys: made with a name and scopes (the key shown once), renamed, rescoped, revoked. */
function ManageKeys() {
  const { data, error, reload } = useLoad(() => call<{ keys: ApiKey[] }>('GET', '/v1/keys'), []);
  const [created, setCreated] = useState<(ApiKey & { key: string }) | undefined>();
  const active = data?.keys.filter((k) => k.revoked_at === null) ?? [];
  const revoked = data?.keys.filter((k) => k.revoked_at !== null) ?? [];
  return (
    <>
      <h1>API keys</h1>
      <div class="grid">
        <CreateKey
          onCreated={(k) => {
            setCreated(k);
            reload();
          }}
        />
        {created && <NewSecret title="New key" name={created.name ?? created.prefix} secret={created.key} onDone={() => setCreated(undefined)} />}
        <Card title="Keys in use" wide>
          <Loading error={error}>
            {data &&
              (active.length === 0 ? (
                <p class="muted">No key is in use.</p>
              ) : (
                <ul class="plain keys">
                  {active.map((k) => (
                    <KeyRow key={k.id} apiKey={k} onChanged={reload} />
                  ))}
                </ul>
              ))}
          </Loading>
        </Card>
        {revoked.length > 0 && (
          <Card title="Revoked keys" wide>
            <ul class="plain">
              {revoked.map((k) => (
                <li key={k.id}>
                  <strong>{k.name ?? 'Unnamed'}</strong> <span class="mono nowrap">{k.prefix}…</span> · revoked {fmtTime(k.revoked_at ?? '')}
                </li>
              ))}
            </ul>
          </Card>
        )}
      </div>
    </>
  );
}

function ScopeChoices({ chosen, legend }: { chosen: readonly string[]; legend: string }) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {SCOPES.map(([v, l]) => (
        <label key={v} class="inline">
          <input type="checkbox" name="scopes" value={v} defaultChecked={chosen.includes(v)} /> {l}
        </label>
      ))}
    </fieldset>
  );
}

function CreateKey({ onCreated }: { onCreated: (k: ApiKey & { key: string }) => void }) {
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setError('');
    try {
      const kind = String(data.get('kind'));
      const scopes = kind === 'publishable' ? ['ingest'] : scopesOf(form);
      onCreated(await call<ApiKey & { key: string }>('POST', '/v1/keys', { name: String(data.get('name')).trim(), kind, scopes }));
      form.reset();
    } catch (err) {
      setError(failure(err));
    }
  };
  return (
    <Card title="Create a key">
      <form class="stack" onSubmit={submit}>
        <label>
          Name
          <input name="name" required maxLength={100} autocomplete="off" />
        </label>
        <label>
          Kind
          <select name="kind">
            <option value="secret">Secret (server side)</option>
            <option value="publishable">Publishable (browsers and apps: sends events only)</option>
          </select>
        </label>
        <ScopeChoices chosen={['ingest', 'read']} legend="Scopes of a secret key" />
        <FormError error={error} />
        <button type="submit">Create key</button>
      </form>
    </Card>
  );
}

function KeyRow({ apiKey: k, onChanged }: { apiKey: ApiKey; onChanged: () => void }) {
  const [error, setError] = useState('');
  const [confirming, setConfirming] = useState(false);
  const label = k.name ?? `key ${k.prefix}`;
  const save = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name')).trim();
    setError('');
    try {
      await call('PATCH', `/v1/keys/${encodeURIComponent(k.id)}`, { ...(name ? { name } : {}), ...(k.kind === 'secret' ? { scopes: scopesOf(form) } : {}) });
      onChanged();
    } catch (err) {
      setError(failure(err));
    }
  };
  const revoke = async () => {
    setError('');
    try {
      await call('DELETE', `/v1/keys/${encodeURIComponent(k.id)}`);
      onChanged();
    } catch (err) {
      setError(failure(err));
    }
  };
  return (
    <li class="key" data-testid={`key-${k.id}`}>
      <div>
        <strong>{label}</strong> <span class="mono nowrap">{k.prefix}…</span> · {k.kind} · {k.scopes.join(', ')} · made {fmtTime(k.created_at)}
      </div>
      <details>
        <summary>
          Change <span class="visually-hidden">{label}</span>
        </summary>
        <form class="stack" onSubmit={save} aria-label={`Change ${label}`}>
          <label>
            Name
            <input name="name" defaultValue={k.name ?? ''} maxLength={100} autocomplete="off" />
          </label>
          {k.kind === 'secret' && <ScopeChoices chosen={k.scopes} legend="Scopes" />}
          <div class="actions">
            <button type="submit">Save</button>
          </div>
        </form>
      </details>
      <FormError error={error} />
      <div class="actions">
        {confirming ? (
          <>
            <span>Revoke {label}? It is refused from then on.</span>
            <button type="button" class="danger" onClick={() => void revoke()}>
              Yes, revoke
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Revoke <span class="visually-hidden">{label}</span>
          </button>
        )}
      </div>
    </li>
  );
}
