import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readActivity } from '../../test/activity-reader.js';
import {
  call,
  client,
  createPublishedAgent,
  describeEachStore,
  expectError,
  type StoreKind,
  startService,
  type TestService,
} from '../../test/harness.js';
import { ROLES, type Role } from '#protocol/roles';
import { ROUTE_ROLES } from './route-roles.js';
import { CONSOLE, member, PASSWORD, tokenOf } from '../../test/console-users.js';

/** A request to `path` (its ids made up) as `headers`: only the role check can refuse it with 403. */
async function attempt(service: TestService, method: string, path: string, headers: Record<string, string>) {
  const url = path.replace(/:[a-z_]+/g, (name) => (name === ':version' ? '1' : '00000000-0000-4000-8000-000000000000'));
  const stop = new AbortController();
  const res = await fetch(service.url + url, {
    method: method.toUpperCase(),
    headers: { ...headers, ...(method === 'post' || method === 'put' ? { 'content-type': 'application/json' } : {}) },
    ...(method === 'post' || method === 'put' ? { body: '{}' } : {}),
    signal: stop.signal,
  });
  // The activity stream never ends by itself: its status is all this needs.
  const body: any = res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : undefined;
  stop.abort();
  return { status: res.status, body };
}

describe('the route table (README, Your team)', () => {
  it('names the least role of every authenticated route, and nothing else', async () => {
    const service = await startService('sqlite');
    try {
      const authenticated = service.app.routes.filter((r) => r.auth !== false).map((r) => r.operationId);
      expect(authenticated.length).toBeGreaterThan(60);
      expect(Object.keys(ROUTE_ROLES).sort()).toEqual([...authenticated].sort());
      // The agent role answers visitors and reads analytics: nothing it can reach changes settings.
      const agentReaches = Object.entries(ROUTE_ROLES)
        .filter(([, role]) => role === 'agent')
        .map(([id]) => service.app.routes.find((r) => r.operationId === id)!)
        .filter((r) => r.method !== 'get')
        .map((r) => r.operationId)
        .sort();
      expect(agentReaches).toEqual([
        'answerTurn',
        'closeConversation',
        'releaseConversation',
        'takeOverConversation',
        'writeMessage',
      ]);
    } finally {
      await service.close();
    }
  });
});

function suite(kind: StoreKind) {
  let service: TestService;

  beforeAll(async () => {
    service = await startService(kind, { activityRecheckMs: 60_000 });
  });
  afterAll(() => service?.close());

  it('refuses every route to each role below its own with 403 naming the role needed, and lets every role at or above it through; the API key acts as admin', async () => {
    // The key's rotation last: it ends the key that asks (grace 0), as it should.
    const routes = service.app.routes
      .filter((r) => r.auth !== false)
      .sort((a, b) => Number(a.operationId === 'rotateApiKey') - Number(b.operationId === 'rotateApiKey'));
    // Each caller its own customer: what one route changes (a key rotated) cannot touch another caller.
    const callers: [string, Role, Record<string, string>][] = [];
    for (const role of ROLES) {
      const { customerId } = await service.newCustomer(`Team of ${role}`);
      callers.push([role, role, (await member(service, customerId, `${role}@${kind}.example`, role)).headers]);
    }
    const { apiKey } = await service.newCustomer('Keyed');
    callers.push(['api key', 'admin', { authorization: `Bearer ${apiKey}` }]);
    const outcomes: string[] = [];
    for (const route of routes)
      for (const [who, role, headers] of callers) {
        const needed = ROUTE_ROLES[route.operationId]!;
        const { status, body } = await attempt(service, route.method, route.path, headers);
        const refused = ROLES.indexOf(role) < ROLES.indexOf(needed);
        if (refused) {
          expect(status, `${who} ${route.operationId}`).toBe(403);
          expect(body.error.code).toBe('forbidden');
          expect(body.error.message).toContain(`needs the ${needed} role`);
        } else expect([401, 403], `${who} ${route.operationId}`).not.toContain(status);
        outcomes.push(`${route.operationId} ${who} ${refused ? 403 : 'through'}`);
      }
    expect(outcomes).toHaveLength(routes.length * 5);
    expect(outcomes.filter((o) => o.endsWith(' 403'))).toHaveLength(
      Object.values(ROUTE_ROLES).reduce(
        (sum, needed) =>
          sum +
          ROLES.filter((role) => ROLES.indexOf(role) < ROLES.indexOf(needed)).length +
          (needed === 'owner' ? 1 : 0),
        0,
      ),
    );
  });

  it('invites with a one-time 72 h link and a role, changes roles at once, keeps the last owner, and a removal ends sessions and activity streams at once', async () => {
    const { customerId } = await service.newCustomer('Harbor team');
    const owner = await member(service, customerId, `owner@team-${kind}.example`, 'owner');
    const as = (headers: Record<string, string>) => ({ headers });
    const before = Date.now();
    const invited = await call(service.url, 'POST', '/api/v1/users', {
      ...as(owner.headers),
      body: { email: ' Desk@Team.example ', role: 'agent' },
    });
    expect(invited.status).toBe(201);
    const invitation = invited.body.data;
    expect(invitation).toMatchObject({
      email: 'desk@team.example',
      role: 'agent',
      status: 'invited',
      last_sign_in_at: null,
    });
    expect(Date.parse(invitation.invitation_expires_at) - before).toBeGreaterThanOrEqual(72 * 3_600_000 - 1000);
    expect(Date.parse(invitation.invitation_expires_at) - before).toBeLessThanOrEqual(72 * 3_600_000 + 5000);
    const token = new URL(invitation.invitation_url).hash.replace('#/welcome/', '');
    // The link names the service as every link it gives does: its host as it listens.
    expect(invitation.invitation_url).toBe(`${service.url}/console/#/welcome/${token}`);
    const welcome = await call(service.url, 'POST', '/console/welcome', { body: { token, password: PASSWORD } });
    expect(welcome.status).toBe(204);
    const again = await call(service.url, 'POST', '/console/welcome', { body: { token, password: PASSWORD } });
    expectError(again, 401, 'unauthorized');
    // Said to a teammate, who gets a new link from their team, not from the operator's command line.
    expect(again.body.error.message).toBe(
      'This link is unknown, used or expired; ask whoever invited you for a new one (an admin sends it from Users)',
    );
    const desk = { cookie: `concierge_session=${tokenOf(welcome.headers.get('set-cookie'))}`, ...CONSOLE };

    // Their role counts from their next request.
    expectError(await call(service.url, 'GET', '/api/v1/model-endpoints', as(desk)), 403, 'forbidden');
    expect((await call(service.url, 'GET', '/api/v1/conversations', as(desk))).status).toBe(200);
    const promoted = await call(service.url, 'PUT', `/api/v1/users/${invitation.id}`, {
      ...as(owner.headers),
      body: { role: 'editor' },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body.data).toMatchObject({ id: invitation.id, role: 'editor', status: 'active' });
    expect((await call(service.url, 'GET', '/api/v1/model-endpoints', as(desk))).status).toBe(200);

    const listed = await call(service.url, 'GET', '/api/v1/users', as(owner.headers));
    expect(listed.body.data.map((u: { email: string; role: string }) => `${u.email} ${u.role}`)).toEqual([
      'desk@team.example editor',
      `owner@team-${kind}.example owner`,
    ]);

    // An admin holds the team but not its owners.
    const admin = await member(service, customerId, `admin@team-${kind}.example`, 'admin');
    const ownerId = owner.userId;
    for (const [method, path, body] of [
      ['POST', '/api/v1/users', { email: 'boss@team.example', role: 'owner' }],
      ['PUT', `/api/v1/users/${ownerId}`, { role: 'agent' }],
      ['DELETE', `/api/v1/users/${ownerId}`, undefined],
      ['PUT', `/api/v1/users/${invitation.id}`, { role: 'owner' }],
    ] as const) {
      const refused = await call(service.url, method, path, { ...as(admin.headers), ...(body ? { body } : {}) });
      expectError(refused, 403, 'forbidden');
      expect(refused.body.error.message).toMatch(/^This needs the owner role: only an owner can /);
    }
    // The last owner stays: not demoted, not removed, even by themselves; an owner invited and not
    // yet in does not count, for they may never come.
    const expectOwnerKept = async () => {
      for (const [method, body] of [
        ['PUT', { role: 'admin' }],
        ['DELETE', undefined],
      ] as const) {
        const kept = await call(service.url, method, `/api/v1/users/${ownerId}`, {
          ...as(owner.headers),
          ...(body ? { body } : {}),
        });
        expectError(kept, 409, 'invalid_state');
        expect(kept.body.error.message).toMatch(/^The last owner cannot be (demoted|removed)/);
      }
    };
    await expectOwnerKept();
    const nextOwner = await call(service.url, 'POST', '/api/v1/users', {
      ...as(owner.headers),
      body: { email: 'next-owner@team.example', role: 'owner' },
    });
    expect(nextOwner.status).toBe(201);
    await expectOwnerKept();
    const withdrawn = await call(service.url, 'DELETE', `/api/v1/users/${nextOwner.body.data.id}`, as(owner.headers));
    expect(withdrawn.status).toBe(200);
    // Someone in the team keeps their password: no second link for them.
    for (const [email, role, status, code] of [
      ['desk@team.example', 'agent', 409, 'invalid_state'],
      ['not an address', 'chief', 400, 'invalid_request'],
    ] as const)
      expectError(
        await call(service.url, 'POST', '/api/v1/users', { ...as(owner.headers), body: { email, role } }),
        status,
        code,
      );
    // An address in another customer's team is invited as any other: whether it is says nothing here.
    const elsewhere = await service.newCustomer('Elsewhere');
    await member(service, elsewhere.customerId, `taken@${kind}.example`, 'owner');
    const taken = await call(service.url, 'POST', '/api/v1/users', {
      ...as(owner.headers),
      body: { email: `taken@${kind}.example`, role: 'agent' },
    });
    const fresh = await call(service.url, 'POST', '/api/v1/users', {
      ...as(owner.headers),
      body: { email: `fresh@${kind}.example`, role: 'agent' },
    });
    expect([taken.status, fresh.status]).toEqual([201, 201]);
    expect(Object.keys(taken.body.data)).toEqual(Object.keys(fresh.body.data));
    expect(taken.body.data).toMatchObject({ email: `taken@${kind}.example`, role: 'agent', status: 'invited' });
    for (const invited of [taken, fresh])
      expect(
        (await call(service.url, 'DELETE', `/api/v1/users/${invited.body.data.id}`, as(owner.headers))).status,
      ).toBe(200);
    // Another customer's user is not found.
    const stranger = await member(service, elsewhere.customerId, `stranger@${kind}.example`, 'agent');
    expectError(
      await call(service.url, 'DELETE', `/api/v1/users/${stranger.userId}`, as(owner.headers)),
      404,
      'not_found',
    );

    // Removed: their session and their activity stream end at once.
    const stream = await readActivity(service.url, desk);
    expect((await call(service.url, 'GET', '/api/v1/conversations', as(desk))).status).toBe(200);
    const removed = await call(service.url, 'DELETE', `/api/v1/users/${invitation.id}`, as(owner.headers));
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id: invitation.id, deleted: true });
    // Ends on this node without waiting for the stream's minute-long recheck.
    const ended = await Promise.race([stream.ended.then(() => 'ended'), sleep(2_000).then(() => 'still open')]);
    expect(ended).toBe('ended');
    expectError(await call(service.url, 'GET', '/api/v1/conversations', as(desk)), 401, 'unauthorized');
  });

  it('makes no change whose audit record cannot be written, and another change committed with it is made and recorded', async () => {
    const { apiKey } = await service.newCustomer('Atomic');
    const api = client(service.url, apiKey);
    const [kept, changed] = [await createPublishedAgent(api, 'Kept'), await createPublishedAgent(api, 'Changed')];
    const db = service.app.store.db;
    // The store refuses the record of one change: the change must not be made without it.
    if (kind === 'postgres') {
      await sql`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'audit refused'; END $$`.execute(db);
      await sql`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW
        WHEN (NEW.target_id = ${sql.lit(kept)}) EXECUTE FUNCTION refuse_audit()`.execute(db);
    } else
      await sql`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log WHEN NEW.target_id = ${sql.lit(kept)}
        BEGIN SELECT RAISE(ABORT, 'audit refused'); END`.execute(db);
    try {
      // Asked together, so the group commit takes them in one batch.
      const [refused, made] = await Promise.all([
        api.put(`/api/v1/agents/${kept}`, { name: 'Never renamed' }),
        api.put(`/api/v1/agents/${changed}`, { name: 'Renamed' }),
      ]);
      expectError(refused, 500, 'internal_error');
      expect(made.status).toBe(200);
    } finally {
      await sql`DROP TRIGGER refuse_audit${sql.raw(kind === 'postgres' ? ' ON audit_log' : '')}`.execute(db);
      if (kind === 'postgres') await sql`DROP FUNCTION refuse_audit()`.execute(db);
    }
    expect((await api.get(`/api/v1/agents/${kept}`)).body.data.name).toBe('Kept');
    expect((await api.get(`/api/v1/agents/${changed}`)).body.data.name).toBe('Renamed');
    const updated = await api.get('/api/v1/audit-log?action=agent.updated');
    expect(updated.body.data.map((e: { target: { id: string } }) => e.target.id)).toEqual([changed]);
  });

  it('records every change with who, what, where from and the request id, never a secret; filters, pages and exports it; PostgreSQL refuses to change it', async () => {
    const { customerId, apiKey } = await service.newCustomer('Audited');
    const api = client(service.url, apiKey);
    const owner = await member(service, customerId, `audit-owner@${kind}.example`, 'owner');
    const asOwner = { headers: { ...owner.headers, 'user-agent': 'AuditTest/1', 'x-request-id': 'req-audit-1' } };
    const agentId = await createPublishedAgent(api, 'Audited agent');
    const deployment = await api.post('/api/v1/deployments', {
      agent_id: agentId,
      channel_config: { hook_url: 'https://audited.example/hook' },
    });
    const secrets: string[] = [apiKey, PASSWORD, deployment.body.data.signing_secret];
    const rotated = await call(service.url, 'POST', `/api/v1/deployments/${deployment.body.data.id}/rotate-secret`, {
      ...asOwner,
      body: { grace_period_s: 0 },
    });
    secrets.push(rotated.body.data.signing_secret);
    const endpoint = await api.post('/api/v1/model-endpoints', {
      name: 'Models',
      base_url: 'https://models.example/v1',
      api_key: 'sk-audit-secret-9876',
    });
    secrets.push('sk-audit-secret-9876');
    const invited = await call(service.url, 'POST', '/api/v1/users', {
      ...asOwner,
      body: { email: 'helper@audited.example', role: 'editor' },
    });
    secrets.push(new URL(invited.body.data.invitation_url).hash.replace('#/welcome/', ''));
    const newKey = await call(service.url, 'POST', '/api/v1/settings/api-key/rotate', {
      ...asOwner,
      body: { grace_period_s: 60 },
    });
    secrets.push(newKey.body.data.key);
    await api.del(`/api/v1/model-endpoints/${endpoint.body.data.id}`);

    const log = await call(service.url, 'GET', '/api/v1/audit-log?per_page=100', asOwner);
    expect(log.status).toBe(200);
    const actions = log.body.data.map((e: { action: string }) => e.action);
    expect(actions).toEqual([
      'model_endpoint.deleted',
      'api_key.rotated',
      'user.invited',
      'model_endpoint.created',
      'deployment.secret_rotated',
      'deployment.created',
      'agent.published',
      'agent.created',
      'user.signed_in',
      'user.password_set',
      'user.invited',
      'customer.created',
    ]);
    const rotation = log.body.data[1];
    expect(rotation).toEqual({
      id: expect.any(String),
      at: expect.any(String),
      actor: { type: 'user', id: owner.userId, email: `audit-owner@${kind}.example` },
      action: 'api_key.rotated',
      target: { type: 'api_key', id: expect.any(String), name: null },
      changes: ['key'],
      detail: null,
      ip: '127.0.0.1',
      user_agent: 'AuditTest/1',
      request_id: 'req-audit-1',
    });
    expect(log.body.data[3]).toMatchObject({
      actor: { type: 'api_key', id: expect.any(String) },
      action: 'model_endpoint.created',
      changes: ['name', 'base_url', 'api_key'],
    });
    expect(log.body.data.at(-1)).toMatchObject({ actor: { type: 'admin', id: null }, action: 'customer.created' });
    // Each record names what it is about as the console shows it, as it is called now (a deleted one: null).
    const named = (action: string) => log.body.data.find((e: { action: string }) => e.action === action).target.name;
    expect(named('agent.published')).toBe('Audited agent');
    expect(named('deployment.created')).toBe('Audited agent (production)');
    expect(named('user.invited')).toBe('helper@audited.example');
    expect(named('model_endpoint.created')).toBeNull();
    expect(named('customer.created')).toBe('Audited');
    expect(log.body.meta).toMatchObject({ total_count: 12, page: 1, per_page: 100 });

    // Filters and pages.
    const byOwner = await call(service.url, 'GET', `/api/v1/audit-log?actor=${owner.userId}`, asOwner);
    expect(byOwner.body.data.map((e: { action: string }) => e.action)).toEqual([
      'api_key.rotated',
      'user.invited',
      'deployment.secret_rotated',
      'user.signed_in',
      'user.password_set',
    ]);
    const byEmail = await call(service.url, 'GET', `/api/v1/audit-log?actor=AUDIT-OWNER@${kind}.example`, asOwner);
    expect(byEmail.body.meta.total_count).toBe(5);
    const deploymentRows = await call(
      service.url,
      'GET',
      `/api/v1/audit-log?target_type=deployment&target_id=${deployment.body.data.id}`,
      asOwner,
    );
    expect(deploymentRows.body.data.map((e: { action: string }) => e.action)).toEqual([
      'deployment.secret_rotated',
      'deployment.created',
    ]);
    const second = await call(service.url, 'GET', '/api/v1/audit-log?per_page=4&page=2', asOwner);
    expect(second.body.data.map((e: { action: string }) => e.action)).toEqual(actions.slice(4, 8));
    expect(second.body.meta).toMatchObject({ total_count: 12, total_pages: 3 });
    const future = await call(service.url, 'GET', '/api/v1/audit-log?from=2999-01-01T00:00:00.000Z', asOwner);
    expect(future.body.data).toEqual([]);
    const exported = await fetch(`${service.url}/api/v1/audit-log/export?action=user.invited`, asOwner);
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await exported.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((e) => e.action)).toEqual(['user.invited', 'user.invited']);
    expect(lines[0]).toEqual(log.body.data[2]);

    // Another customer's records are not there; an editor may not read them.
    const other = await service.newCustomer('Other audited');
    const others = await call(service.url, 'GET', '/api/v1/audit-log', {
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect(others.body.data.map((e: { action: string }) => e.action)).toEqual(['customer.created']);
    const editor = await member(service, customerId, `audit-editor@${kind}.example`, 'editor');
    expectError(await call(service.url, 'GET', '/api/v1/audit-log', { headers: editor.headers }), 403, 'forbidden');

    // No secret in any record, whatever its column.
    const rows = await service.app.store.db.selectFrom('audit_log').selectAll().execute();
    const stored = JSON.stringify(rows);
    for (const secret of secrets) expect(stored).not.toContain(secret);

    // Nothing changes it: no route, and not even SQL, on either store.
    expect(service.app.routes.filter((r) => r.path.startsWith('/api/v1/audit-log') && r.method !== 'get')).toEqual([]);
    const db = service.app.store.db;
    await expect(db.updateTable('audit_log').set({ action: 'forged' }).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('audit_log').execute()).rejects.toThrow(/append-only/);
    expect((await db.selectFrom('audit_log').select('id').execute()).length).toBe(rows.length);
  });
}

describeEachStore('teams: roles, users, the audit log', suite);
