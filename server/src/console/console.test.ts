import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { deploy, Widget } from '../../test/concierge-kit.js';
import { readActivity } from '../../test/activity-reader.js';
import {
  call,
  client,
  describeEachStore,
  expectError,
  type StoreKind,
  startService,
  type TestService,
  waitFor,
} from '../../test/harness.js';
import { auditOf } from '../audit/audit-trail.js';

const PASSWORD = 'correct horse battery';
const CONSOLE = { 'x-requested-with': 'concierge-console' };

/** The session cookie's value from a Set-Cookie header. */
const tokenOf = (setCookie: string | null): string => /^concierge_session=([^;]*)/.exec(setCookie ?? '')?.[1] ?? '';

function suite(kind: StoreKind) {
  let service: TestService;
  let dir: string;
  let customerId: string;
  let apiKey: string;
  const agents = (cookie: string, headers: Record<string, string> = CONSOLE) =>
    call(service.url, 'GET', '/api/v1/agents', { headers: { cookie: `concierge_session=${cookie}`, ...headers } });
  const signIn = (email: string, password: string) =>
    call(service.url, 'POST', '/console/session', { body: { email, password } });
  const newUser = async (email: string) =>
    (await service.app.consoleAccounts.invite(customerId, email, { audit: auditOf(customerId, 'admin') })).token;
  const welcomed = async (email: string) => {
    const reply = await call(service.url, 'POST', '/console/welcome', {
      body: { token: await newUser(email), password: PASSWORD },
    });
    expect(reply.status).toBe(204);
    return tokenOf(reply.headers.get('set-cookie'));
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><title>Console</title><script type="module" src="./assets/app.js"></script>',
    );
    writeFileSync(join(dir, 'assets', 'app.js'), 'export {};');
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    service = await startService(kind, { consoleDir: dir, activityRecheckMs: 100 });
    ({ customerId, apiKey } = await service.newCustomer('Harbor Hotel'));
  });
  afterAll(async () => {
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sets a password once from a welcome link, then signs in with a strict, HttpOnly session cookie', async () => {
    const token = await newUser('Ana@Example.com');
    expectError(
      await call(service.url, 'POST', '/console/welcome', { body: { token, password: 'too short' } }),
      400,
      'invalid_request',
    );
    const welcome = await call(service.url, 'POST', '/console/welcome', { body: { token, password: PASSWORD } });
    expect(welcome.status).toBe(204);
    expect(welcome.body).toBe('');
    expect(welcome.headers.get('cache-control')).toBe('no-store');
    const cookie = welcome.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^concierge_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/);
    expect((await agents(tokenOf(cookie))).status).toBe(200);
    const me = await call(service.url, 'GET', '/console/session', {
      headers: { cookie: `concierge_session=${tokenOf(cookie)}` },
    });
    const stored = await service.app.store.db
      .selectFrom('console_users')
      .selectAll()
      .where('email', '=', 'ana@example.com')
      .executeTakeFirstOrThrow();
    expect(me.body.data).toEqual({
      id: stored.id,
      email: 'ana@example.com',
      created_at: stored.created_at,
      last_sign_in_at: stored.last_sign_in_at,
      role: 'owner',
      single_sign_on: 'off',
    });
    expect(stored.last_sign_in_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await call(service.url, 'GET', '/console/session')).body).toMatchObject({ success: true, data: null });
    // One use only.
    expectError(
      await call(service.url, 'POST', '/console/welcome', { body: { token, password: PASSWORD } }),
      401,
      'unauthorized',
    );
    expect((await signIn('ana@example.com', PASSWORD)).status).toBe(204);
    const user = await service.app.store.db
      .selectFrom('console_users')
      .selectAll()
      .where('email', '=', 'ana@example.com')
      .executeTakeFirstOrThrow();
    expect(user.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(user.last_sign_in_at).not.toBeNull();
    expect(service.logs.join('')).not.toContain(tokenOf(cookie));
  });

  it('ends every session of a user whose password a new welcome link replaces', async () => {
    const before = await welcomed('kim@example.com');
    expect((await agents(before)).status).toBe(200);
    const after = await welcomed('kim@example.com');
    expectError(await agents(before), 401, 'unauthorized');
    expect((await agents(after)).status).toBe(200);
  });

  it('refuses a wrong password and an unknown email with the same answer', async () => {
    await welcomed('ben@example.com');
    const wrong = await signIn('ben@example.com', 'not the password');
    const unknown = await signIn('nobody@example.com', PASSWORD);
    expectError(wrong, 401, 'unauthorized');
    expectError(unknown, 401, 'unauthorized');
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  it('takes the cookie only with the console header and from its own origin; the key works as before', async () => {
    const session = await welcomed('cy@example.com');
    expect((await agents(session)).status).toBe(200);
    expectError(await agents(session, {}), 401, 'unauthorized');
    expectError(await agents(session, { ...CONSOLE, origin: 'https://evil.example' }), 401, 'unauthorized');
    expect((await agents(session, { ...CONSOLE, origin: service.url })).status).toBe(200);
    expectError(await agents('not-a-session'), 401, 'unauthorized');
    expect((await client(service.url, apiKey).get('/api/v1/agents')).status).toBe(200);
  });

  it('lets an EventSource read the activity stream with the cookie alone, but only from its own origin', async () => {
    const session = await welcomed('es@example.com');
    const open = async (headers: Record<string, string>) => {
      const stop = new AbortController();
      const res = await fetch(`${service.url}/api/v1/activity`, {
        headers: { cookie: `concierge_session=${session}`, ...headers },
        signal: stop.signal,
      });
      stop.abort();
      return res.status;
    };
    expect(await open({})).toBe(200);
    expect(await open({ origin: service.url })).toBe(200);
    expect(await open({ origin: 'https://evil.example' })).toBe(401);
    // Every other route still wants the console's header.
    expectError(await agents(session, {}), 401, 'unauthorized');
  });

  it('ends an open activity stream once its session is signed out, and an open stream does not keep the session alive', async () => {
    const db = service.app.store.db;
    const session = await welcomed('stream@example.com');
    const reader = await readActivity(service.url, { cookie: `concierge_session=${session}` });
    expect(reader.res.status).toBe(200);
    // Half an hour without a click: the stream's own checks must not count as one.
    const halfAnHourAgo = new Date(Date.now() - 30 * 60_000).toISOString();
    await db.updateTable('console_sessions').set({ last_seen_at: halfAnHourAgo }).execute();
    let ended = false;
    void reader.ended.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(ended).toBe(false);
    const seen = await db.selectFrom('console_sessions').select('last_seen_at').execute();
    expect(new Set(seen.map((r) => r.last_seen_at))).toEqual(new Set([halfAnHourAgo]));

    expect(
      (await call(service.url, 'DELETE', '/console/session', { headers: { cookie: `concierge_session=${session}` } }))
        .status,
    ).toBe(204);
    await waitFor(async () => ended, 3_000, 'the stream to end');
  });

  it("acts for the user's customer only: another customer's agent is 404, a new one is the user's", async () => {
    const session = await welcomed('cy2@example.com');
    const asUser = (method: string, path: string, body?: unknown) =>
      call(service.url, method, path, {
        headers: { cookie: `concierge_session=${session}`, ...CONSOLE },
        ...(body ? { body } : {}),
      });
    const other = client(service.url, (await service.newCustomer('Another hotel')).apiKey);
    const foreign = (await other.post('/api/v1/agents', { name: 'Not yours' })).body.data.agent_id;
    expectError(await asUser('GET', `/api/v1/agents/${foreign}`), 404, 'not_found');
    expectError(await asUser('DELETE', `/api/v1/agents/${foreign}`), 404, 'not_found');
    const mine = (await asUser('POST', '/api/v1/agents', { name: 'Made in the console' })).body.data.agent_id;
    expect((await client(service.url, apiKey).get(`/api/v1/agents/${mine}`)).status).toBe(200);
    expectError(await other.get(`/api/v1/agents/${mine}`), 404, 'not_found');
  });

  it('ends a session on sign-out, after 2 h idle and after 12 h whatever happens', async () => {
    const db = service.app.store.db;
    const out = await welcomed('dee@example.com');
    const signedOut = await call(service.url, 'DELETE', '/console/session', {
      headers: { cookie: `concierge_session=${out}` },
    });
    expect(signedOut.status).toBe(204);
    expect(signedOut.headers.get('set-cookie')).toMatch(
      /^concierge_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0$/,
    );
    expectError(await agents(out), 401, 'unauthorized');

    const idle = await welcomed('dee@example.com');
    const agesAgo = (ms: number) => new Date(Date.now() - ms).toISOString();
    await db
      .updateTable('console_sessions')
      .set({ last_seen_at: agesAgo(2 * 3_600_000 + 1_000) })
      .execute();
    expectError(await agents(idle), 401, 'unauthorized');

    const old = await welcomed('dee@example.com');
    expect((await agents(old)).status).toBe(200);
    await db
      .updateTable('console_sessions')
      .set({ expires_at: agesAgo(1_000) })
      .execute();
    expectError(await agents(old), 401, 'unauthorized');
  });

  it('refuses an email after 10 failures in 15 minutes, the right password too, and an address after 10', async () => {
    // Earlier tests failed from this address too: the count starts here.
    await service.app.store.db.deleteFrom('console_sign_in_failures').execute();
    await welcomed('eve@example.com');
    for (let i = 0; i < 10; i++) expectError(await signIn('eve@example.com', `wrong ${i}`), 401, 'unauthorized');
    const limited = await signIn('eve@example.com', PASSWORD);
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(900);
    // The failures were counted against this client's address as well: another email from it is refused.
    await welcomed('fay@example.com');
    expectError(await signIn('fay@example.com', PASSWORD), 429, 'rate_limited');
    // Once the window has passed, both work again.
    await service.app.store.db
      .updateTable('console_sign_in_failures')
      .set({ at: new Date(Date.now() - 15 * 60_000 - 1_000).toISOString() })
      .execute();
    expect((await signIn('eve@example.com', PASSWORD)).status).toBe(204);
  });

  it('counts console requests in the usage like any other', async () => {
    const session = await welcomed('hal@example.com');
    await agents(session);
    const usage = await client(service.url, apiKey).get('/api/v1/settings/api-key/usage?days=1');
    expect(usage.body.data.by_route).toContainEqual({
      method: 'GET',
      route: '/api/v1/agents',
      requests: expect.any(Number),
    });
    const byRoute = usage.body.data.by_route.find((r: { route: string }) => r.route === '/api/v1/agents');
    // This customer's agents list was read by console sessions only (the key read it once, in an earlier test).
    expect(byRoute.requests).toBeGreaterThanOrEqual(5);
  });

  it('mints a ten-minute preview token for an active deployment; the service origin passes allowed_origins', async () => {
    const { api, deploymentId } = await deploy(service, {
      hook_url: 'https://hooks.example/turn',
      allowed_origins: ['https://hotel.example'],
    });
    const owner = (
      await service.app.store.db
        .selectFrom('deployments')
        .select('customer_id')
        .where('id', '=', deploymentId)
        .executeTakeFirstOrThrow()
    ).customer_id;
    const { token: welcome } = await service.app.consoleAccounts.invite(owner, 'gus@example.com', {
      audit: auditOf(owner, 'admin'),
    });
    const session = tokenOf(
      (
        await call(service.url, 'POST', '/console/welcome', { body: { token: welcome, password: PASSWORD } })
      ).headers.get('set-cookie'),
    );
    const minted = await call(service.url, 'POST', `/api/v1/deployments/${deploymentId}/preview-token`, {
      headers: { cookie: `concierge_session=${session}`, ...CONSOLE },
    });
    expect(minted.status).toBe(200);
    const claims = decodeJwt(minted.body.data.token);
    const user = await service.app.store.db
      .selectFrom('console_users')
      .select('id')
      .where('email', '=', 'gus@example.com')
      .executeTakeFirstOrThrow();
    expect(claims).toMatchObject({ sub: `console:${user.id}`, aud: deploymentId, preview: true });
    expect(claims.exp! - claims.iat!).toBe(600);
    expect(minted.body.data).toMatchObject({
      sub: `console:${user.id}`,
      expires_at: new Date(claims.exp! * 1000).toISOString(),
    });
    const byKey = await api.post(`/api/v1/deployments/${deploymentId}/preview-token`);
    expect(decodeJwt(byKey.body.data.token).sub).toMatch(/^api-key:[0-9a-f-]{36}$/);
    expect(decodeJwt(byKey.body.data.token).name).toBe('Console preview');
    // The visitor it plays, for the agent's variables (README, Variables and guardrails).
    const playing = await api.post(`/api/v1/deployments/${deploymentId}/preview-token`, {
      name: 'Ada',
      ctx: { room: '214' },
    });
    expect(decodeJwt(playing.body.data.token)).toMatchObject({ name: 'Ada', ctx: { room: '214' }, preview: true });
    expectError(
      await api.post(`/api/v1/deployments/${deploymentId}/preview-token`, { name: 'Ada', sub: 'someone-else' }),
      400,
      'invalid_request',
    );

    // A page the origin check passes gets as far as its token (4401 for this one); another is closed before (4403).
    const opens = (origin: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${service.url.replace('http', 'ws')}/embed/concierge/${deploymentId}/ws`, { origin });
        ws.on('open', () => ws.send(JSON.stringify({ type: 'hello', token: 'not.a.token' })));
        ws.on('close', (code) => resolve(code));
      });
    expect(await opens(service.url)).toBe(4401);
    expect(await opens('https://hotel.example')).toBe(4401);
    expect(await opens('https://elsewhere.example')).toBe(4403);

    // Its conversation is marked a preview: the inbox leaves it out.
    const previewed = await Widget.open(service, deploymentId, { origin: 'https://hotel.example' });
    const { conversation_id } = await previewed.hello(minted.body.data.token);
    const ids = async (query: string) =>
      (await api.get(`/api/v1/conversations?${query}`)).body.data.map((c: { id: string }) => c.id);
    expect(await ids('preview=true')).toEqual([conversation_id]);
    expect(await ids('preview=false')).toEqual([]);
    previewed.close();

    expect((await api.post(`/api/v1/deployments/${deploymentId}/deactivate`, {})).status).toBe(200);
    expectError(await api.post(`/api/v1/deployments/${deploymentId}/preview-token`), 409, 'invalid_state');
    const stranger = client(service.url, (await service.newCustomer('Other')).apiKey);
    expectError(await stranger.post(`/api/v1/deployments/${deploymentId}/preview-token`), 404, 'not_found');
  });

  it('serves the console under a strict CSP, never cached, with /console sent to /console/', async () => {
    const bare = await fetch(`${service.url}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/console/');
    const withQuery = await fetch(`${service.url}/console?from=mail`, { redirect: 'manual' });
    expect(withQuery.status).toBe(308);
    expect(withQuery.headers.get('location')).toBe('/console/?from=mail');
    for (const path of ['/console/', '/console/assets/app.js']) {
      const res = await fetch(service.url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'self'; media-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      );
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect((await fetch(`${service.url}/console/`)).headers.get('content-type')).toMatch(/^text\/html/);
    expectError(await call(service.url, 'GET', '/console/assets/absent.js'), 404, 'not_found');
  });

  it("answers a browser's /favicon.ico with the console's icon, not a 404", async () => {
    const icon = await fetch(`${service.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toBe('<svg xmlns="http://www.w3.org/2000/svg"/>');
    expectError(await call(service.url, 'GET', '/favicon.ico/more'), 404, 'not_found');
  });
}

describeEachStore('console accounts and sessions', suite);

describe('console behind https', () => {
  it('marks the cookie Secure when PUBLIC_BASE_URL is https, and takes that origin as its own', async () => {
    const service = await startService('sqlite', { env: { PUBLIC_BASE_URL: 'https://concierge.example' } });
    try {
      const { customerId } = await service.newCustomer();
      const { token } = await service.app.consoleAccounts.invite(customerId, 'ivy@example.com', {
        audit: auditOf(customerId, 'admin'),
      });
      const welcome = await call(service.url, 'POST', '/console/welcome', { body: { token, password: PASSWORD } });
      expect(welcome.headers.get('set-cookie')).toMatch(/; Secure$/);
      const cookie = `concierge_session=${tokenOf(welcome.headers.get('set-cookie'))}`;
      const from = (origin: string) =>
        call(service.url, 'GET', '/api/v1/agents', { headers: { cookie, ...CONSOLE, origin } });
      expect((await from('https://concierge.example')).status).toBe(200);
      expectError(await from(service.url), 401, 'unauthorized');
    } finally {
      await service.close();
    }
  });
});

describe('console without a build', () => {
  it('answers /console/ with a 404 that says how to build it', async () => {
    const service = await startService('sqlite', { consoleDir: join(tmpdir(), 'no-console-here') });
    try {
      const reply = await call(service.url, 'GET', '/console/');
      expectError(reply, 404, 'not_found');
      expect(reply.body.error.message).toContain('npm run build:console');
    } finally {
      await service.close();
    }
  });
});
