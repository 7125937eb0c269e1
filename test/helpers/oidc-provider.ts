import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

/** A person at the test provider: the login typed on its sign-in page names one. */
export interface ProviderPerson {
  readonly email: string;
  readonly email_verified: boolean;
  readonly groups: readonly string[];
}

export interface TestProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  close(): Promise<void>;
}

export const CLIENT_ID = 'vigil-test';
export const CLIENT_SECRET = 'vigil-test-client-secret-0123456789';

/**
 * The certified oidc-provider on a real loopback port: one confidential client whose redirect
 * URIs are given, its development sign-in page (any login, any password; the login picks the
 * person from `people`), consent granted without a page, and a `groups` claim always released.
 */
export async function startProvider(redirectUris: readonly string[], people: Readonly<Record<string, ProviderPerson>>): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const configuration: Configuration = {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [...redirectUris],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub', 'groups'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['test-provider-cookie-key-0123456789'] },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600 },
    findAccount: (_ctx, id) => {
      const person = people[id];
      if (!person) return undefined;
      return { accountId: id, claims: () => ({ sub: id, name: id, email: person.email, email_verified: person.email_verified, groups: [...person.groups] }) };
    },
    // A first-party client: the grant is made on the spot instead of asking for consent.
    loadExistingGrant: async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      const client = ctx.oidc.client;
      if (!accountId || !client) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());
  return {
    issuer,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Goes through the provider as a browser would, without one: follows the authorization URL's
 * redirects with the provider's cookies, submits its sign-in form as `login`, and returns the
 * URL the provider finally sends the browser to (the service's callback, with code and state).
 */
export async function signInAtProvider(authorizationUrl: string, login: string): Promise<URL> {
  const jar = new Map<string, string>();
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = new URL(authorizationUrl);
  let body: URLSearchParams | undefined;
  const provider = url.origin;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, {
      method: body ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: cookie(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    remember(res);
    body = undefined;
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url);
      await res.arrayBuffer();
      if (url.origin !== provider) return url;
      continue;
    }
    const html = await res.text();
    if (!html.includes('name="login"')) throw new Error(`the provider answered ${res.status} without a sign-in form: ${html.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error('no form action on the sign-in page');
    url = new URL(action, url);
    body = new URLSearchParams({ prompt: 'login', login, password: 'any password' });
  }
  throw new Error('the provider never sent the browser back');
}
