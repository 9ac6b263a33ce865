import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startService, type TestService } from '../../test/harness.js';
import { auditOf, inTransaction } from '../audit/audit-trail.js';
import { setSingleSignOn } from './single-sign-on.repository.js';
import { CLIENT, openIdProvider } from '../../test/openid-provider.js';

/**
 * A browser, as far as redirects and cookies go: follows every redirect, keeping each server's
 * cookies (by port), until the console answers; returns where the console sent it and the cookies
 * it set.
 */
async function signInThrough(service: TestService, options: { skipStart?: boolean; linkWith?: string } = {}) {
  const jar = new Map<string, Map<string, string>>();
  const jarOf = (url: URL) => jar.get(url.port) ?? jar.set(url.port, new Map()).get(url.port)!;
  let url = new URL(`${service.url}/console/sso/start${options.linkWith ? '?link=1' : ''}`);
  const servicePort = url.port;
  if (options.linkWith) jarOf(url).set('concierge_session', options.linkWith);
  for (let hop = 0; hop < 12; hop++) {
    const cookies = jarOf(url);
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (url.port === servicePort && url.pathname === '/console/sso/callback')
      return {
        status: res.status,
        location,
        session:
          (cookies.get('concierge_session') !== options.linkWith && cookies.get('concierge_session')) || undefined,
      };
    if (!location) throw new Error(`stopped at ${url.href} with ${res.status}: ${await res.text()}`);
    url = new URL(location, url);
    if (options.skipStart && url.port === servicePort) jarOf(url).clear();
  }
  throw new Error('too many redirects');
}

describe('single sign-on to the console with OpenID Connect (README, Your team)', () => {
  let op: Awaited<ReturnType<typeof openIdProvider>>;
  let service: TestService;
  let customerId: string;

  beforeAll(async () => {
    op = await openIdProvider();
    service = await startService('sqlite', {
      env: {
        OIDC_ISSUER: op.issuer,
        OIDC_CLIENT_ID: CLIENT.id,
        OIDC_CLIENT_SECRET: CLIENT.secret,
        OIDC_NAME: 'Harbor ID',
      },
    });
    // The console's way back names it as its public address does: its host as it listens.
    op.serve(`${service.url}/console/sso/callback`);
    ({ customerId } = await service.newCustomer('Harbor'));
    const audit = auditOf(customerId, 'admin');
    await inTransaction(service.app.store.db).run('', (trx) =>
      setSingleSignOn(trx, customerId, { enabled: true, domains: ['harbor.example'] }),
    );
    await service.app.consoleAccounts.invite(customerId, 'ana@harbor.example', { role: 'agent', audit });
    op.state.people = {
      ana: { email: 'Ana@Harbor.example', verified: true },
      stranger: { email: 'stranger@elsewhere.example', verified: true },
      unverified: { email: 'ana@harbor.example', verified: false },
    };
  });
  afterAll(async () => {
    await service?.close();
    await op?.close();
  });

  it('is offered under the name configured', async () => {
    expect((await call(service.url, 'GET', '/console/sso')).body.data).toEqual({ enabled: true, name: 'Harbor ID' });
  });

  it('signs in the invited email, verified by the provider, as that user, using the invitation up; then again as a user', async () => {
    op.state.signIn = 'ana';
    op.state.tamper = undefined;
    const first = await signInThrough(service);
    expect(first).toMatchObject({ status: 302, location: '/console/#/' });
    const me = await call(service.url, 'GET', '/console/session', {
      headers: { cookie: `concierge_session=${first.session}` },
    });
    expect(me.body.data).toMatchObject({ email: 'ana@harbor.example', role: 'agent' });
    const user = await service.app.store.db
      .selectFrom('console_users')
      .selectAll()
      .where('email', '=', 'ana@harbor.example')
      .executeTakeFirstOrThrow();
    expect([user.welcome_hash, user.password_hash]).toEqual([null, null]);
    const accepted = await service.app.store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'user.invitation_accepted')
      .executeTakeFirstOrThrow();
    expect(accepted).toMatchObject({ actor_type: 'user', actor_id: user.id, target_id: user.id, ip: '127.0.0.1' });
    const second = await signInThrough(service);
    expect(second.location).toBe('/console/#/');
    expect(second.session).toMatch(/^[\w-]{43}$/);
  });

  it('refuses, back to the sign-in page with the reason, an email in no team, an unverified email, a wrong audience, an expired token and a callback this browser did not start', async () => {
    const refusals: Record<string, () => Promise<void>> = {
      not_invited: async () => void (op.state.signIn = 'stranger'),
      unverified_email: async () => void (op.state.signIn = 'unverified'),
    };
    for (const [reason, arrange] of Object.entries(refusals)) {
      op.state.tamper = undefined;
      await arrange();
      expect(await signInThrough(service), reason).toEqual({
        status: 302,
        location: `/console/#/sign-in/${reason}`,
        session: undefined,
      });
    }
    op.state.signIn = 'ana';
    // Re-signed by the provider's key with nothing changed, a token is taken: what follows is refused for its claims alone.
    op.state.tamper = (claims) => claims;
    expect((await signInThrough(service)).location).toBe('/console/#/');
    for (const tamper of [
      (claims: Record<string, unknown>) => ({ ...claims, aud: 'someone-else' }),
      (claims: Record<string, unknown>) => ({
        ...claims,
        iat: Math.floor(Date.now() / 1000) - 7200,
        exp: Math.floor(Date.now() / 1000) - 3600,
      }),
    ]) {
      op.state.tamper = tamper;
      expect(await signInThrough(service)).toEqual({
        status: 302,
        location: '/console/#/sign-in/failed',
        session: undefined,
      });
    }
    op.state.tamper = undefined;
    expect(await signInThrough(service, { skipStart: true })).toEqual({
      status: 302,
      location: '/console/#/sign-in/failed',
      session: undefined,
    });
  });

  it('sends the browser back to the sign-in page, told why, when the identity provider cannot be reached', async () => {
    // A port nothing listens on: the provider's metadata cannot be read.
    const gone = await startService('sqlite', {
      env: { OIDC_ISSUER: 'http://127.0.0.1:9/', OIDC_CLIENT_ID: CLIENT.id, OIDC_CLIENT_SECRET: CLIENT.secret },
    });
    // What a browser that started before the provider went away brings back.
    const pending = Buffer.from(JSON.stringify({ verifier: 'v'.repeat(43), state: 'xyz', nonce: 'n' })).toString(
      'base64url',
    );
    try {
      for (const path of ['/console/sso/start', '/console/sso/callback?code=abc&state=xyz']) {
        const res = await fetch(gone.url + path, {
          redirect: 'manual',
          headers: { cookie: `concierge_sso=${pending}` },
        });
        expect([res.status, res.headers.get('location')], path).toEqual([302, '/console/#/sign-in/unavailable']);
      }
    } finally {
      await gone.close();
    }
  });

  it("signs in to no other customer's team: only a team that takes it for the domain, a linked account or a standing invitation, and an account with a password once it linked the provider", async () => {
    const db = service.app.store.db;
    const ssoFor = (id: string, enabled: boolean, domains: string[]) =>
      inTransaction(db).run('', (trx) => setSingleSignOn(trx, id, { enabled, domains }));
    // Two other customers with an owner of the same address, each with a password.
    const withPassword = async (name: string) => {
      const { customerId: id } = await service.newCustomer(name);
      const { token } = await service.app.consoleAccounts.invite(id, 'bo@harbor.example', {
        role: 'owner',
        audit: auditOf(id, 'admin'),
      });
      await call(service.url, 'POST', '/console/welcome', { body: { token, password: `${name} password 1` } });
      return id;
    };
    const quiet = await withPassword('Quiet');
    const open = await withPassword('Open');
    await ssoFor(open, true, ['harbor.example']);
    op.state.people.bo = { email: 'bo@harbor.example', verified: true };
    op.state.signIn = 'bo';
    op.state.tamper = undefined;
    // Open takes single sign-on, but Bo's account there proved no link yet: no sign-in anywhere.
    expect(await signInThrough(service)).toEqual({
      status: 302,
      location: '/console/#/sign-in/not_linked',
      session: undefined,
    });

    // Signed in with the password of Open's account (each account its own password), Bo links the provider.
    const passwordSession = await call(service.url, 'POST', '/console/session', {
      body: { email: 'bo@harbor.example', password: 'Open password 1' },
    });
    const cookie = /concierge_session=([^;]+)/.exec(passwordSession.headers.get('set-cookie')!)![1]!;
    const me = async (session: string) =>
      (await call(service.url, 'GET', '/console/session', { headers: { cookie: `concierge_session=${session}` } })).body
        .data;
    expect(await me(cookie)).toMatchObject({ email: 'bo@harbor.example', role: 'owner', single_sign_on: 'linkable' });
    expect(await signInThrough(service, { linkWith: cookie })).toMatchObject({ status: 302, location: '/console/#/' });
    expect(await me(cookie)).toMatchObject({ single_sign_on: 'linked' });

    // From now on the provider signs Bo in to Open, never to Quiet.
    const signedIn = await signInThrough(service);
    expect(signedIn.location).toBe('/console/#/');
    const session = await db
      .selectFrom('console_sessions')
      .selectAll()
      .where('token_hash', '=', (await import('../shared/secret-digest.js')).secretDigest(signedIn.session!))
      .executeTakeFirstOrThrow();
    expect(session.customer_id).toBe(open);
    expect(session.customer_id).not.toBe(quiet);
    const methods = await db
      .selectFrom('audit_log')
      .select(['action', 'detail'])
      .where('customer_id', '=', open)
      .where('action', 'in', ['user.signed_in', 'user.single_sign_on_linked'])
      .orderBy('id')
      .execute();
    expect(methods).toEqual([
      { action: 'user.signed_in', detail: '{"method":"password"}' },
      { action: 'user.signed_in', detail: '{"method":"password"}' },
      { action: 'user.single_sign_on_linked', detail: null },
      { action: 'user.signed_in', detail: '{"method":"single_sign_on"}' },
    ]);

    // Turned off, or the domain no longer listed, and the link no longer signs in.
    await ssoFor(open, true, ['other.example']);
    expect((await signInThrough(service)).location).toBe('/console/#/sign-in/not_invited');
    await ssoFor(open, true, ['harbor.example']);

    // The provider vouching for another address cannot link it to Bo's account.
    op.state.signIn = 'ana';
    expect((await signInThrough(service, { linkWith: cookie })).location).toBe('/console/#/sign-in/other_email');
  });

  it('is not offered without OIDC_ISSUER: its routes answer 404', async () => {
    const plain = await startService('sqlite');
    try {
      expect((await call(plain.url, 'GET', '/console/sso')).body.data).toEqual({ enabled: false, name: null });
      expect((await call(plain.url, 'GET', '/console/sso/start')).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
