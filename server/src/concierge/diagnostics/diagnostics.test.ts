import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../logger.js';
import { StoreHealth } from '../../store/store-health.js';
import { isoIn } from '../../shared/time.js';
import { DETAILS_PER_DAY, InstallDiagnostics, LISTED, OTHER } from './install-diagnostics.js';
import { deploy, mintToken, Widget } from '../../../test/concierge-kit.js';
import { describeEachStore, expectError, startService, type TestService } from '../../../test/harness.js';

describeEachStore('install diagnostics', (kind) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(() => service.close());

  it('lists the origins that opened sessions and every refusal by reason, origin and cause; another customer sees 404', async () => {
    const hotel = 'https://hotel.example';
    const { api, deploymentId, secret } = await deploy(service, {
      hook_url: 'https://hooks.example/turn',
      allowed_origins: [hotel],
    });
    for (const _ of [1, 2]) {
      const copycat = await Widget.open(service, deploymentId, { origin: 'https://copycat.example' });
      expect((await copycat.closed).code).toBe(4403);
    }
    const tokens: [string, string][] = [
      [await mintToken('whsec_not_the_secret', deploymentId), 'signature'],
      [await mintToken(secret, '00000000-0000-4000-8000-000000000000'), 'audience'],
      [await mintToken(secret, deploymentId, { iat: Math.floor(Date.now() / 1000) - 3600, ttlS: 60 }), 'expired'],
    ];
    for (const [token] of tokens) {
      const widget = await Widget.open(service, deploymentId, { origin: hotel });
      widget.send({ type: 'hello', token });
      await widget.closed;
    }
    for (let i = 0; i < 2; i++) {
      const widget = await Widget.open(service, deploymentId, { origin: hotel });
      await widget.hello(await mintToken(secret, deploymentId, { sub: `guest-${i}` }));
      widget.close();
    }
    expect((await api.post(`/api/v1/deployments/${deploymentId}/deactivate`, {})).status).toBe(200);
    const late = await Widget.open(service, deploymentId, { origin: hotel });
    expect((await late.closed).code).toBe(4410);

    const res = await api.get(`/api/v1/deployments/${deploymentId}/diagnostics`);
    expect(res.status).toBe(200);
    const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);
    expect(res.body.data.origins).toEqual([{ origin: hotel, sessions: 2, last_seen_at: at }]);
    expect(res.body.data.last_session_at).toEqual(at);
    expect(res.body.data.refused).toEqual(
      expect.arrayContaining([
        { reason: 'origin_not_allowed', origin: 'https://copycat.example', cause: null, count: 2, last_at: at },
        ...tokens.map(([, cause]) => ({ reason: 'token_invalid', origin: null, cause, count: 1, last_at: at })),
        { reason: 'deployment_inactive', origin: null, cause: null, count: 1, last_at: at },
      ]),
    );
    expect(res.body.data.refused).toHaveLength(5);

    const other = await deploy(service, { hook_url: 'https://hooks.example/turn' });
    expectError(await other.api.get(`/api/v1/deployments/${deploymentId}/diagnostics`), 404, 'not_found');
  });

  it('keeps every count through a write the store refused, those counted while it failed too', async () => {
    const { deploymentId } = await deploy(service, { hook_url: 'https://hooks.example/turn' });
    const { db } = service.app.store;
    const diagnostics = new InstallDiagnostics({
      db,
      health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }),
    });
    diagnostics.refused(deploymentId, 'deployment_inactive', undefined);
    diagnostics.refused(deploymentId, 'deployment_inactive', undefined);
    await sql`alter table deployment_diagnostics rename to deployment_diagnostics_away`.execute(db);
    // The write starts now and fails; one more refusal is counted while it is under way.
    const failing = diagnostics.read(deploymentId).catch(() => undefined);
    diagnostics.refused(deploymentId, 'deployment_inactive', undefined);
    await failing;
    await sql`alter table deployment_diagnostics_away rename to deployment_diagnostics`.execute(db);
    expect((await diagnostics.read(deploymentId)).refused).toEqual([
      { reason: 'deployment_inactive', origin: null, cause: null, count: 3, last_at: expect.any(String) },
    ]);
  });

  it('keeps at most 100 distinct origins a deployment a day across writes, counts the rest as (other), and lists the top 50 with totals', async () => {
    const { api, deploymentId } = await deploy(service, { hook_url: 'https://hooks.example/turn' });
    const { db } = service.app.store;
    const diagnostics = new InstallDiagnostics({
      db,
      health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }),
    });
    // Three writes of 150 made-up origins each: the cap holds across them, not per write.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 150; i++)
        diagnostics.refused(deploymentId, 'origin_not_allowed', `https://made-up-${round}-${i}.example`);
      await diagnostics.read(deploymentId);
    }
    const rows = await db
      .selectFrom('deployment_diagnostics')
      .select(['detail', 'count'])
      .where('deployment_id', '=', deploymentId)
      .execute();
    expect(rows).toHaveLength(DETAILS_PER_DAY + 1);
    expect(rows.find((r) => r.detail === OTHER)?.count).toBe(450 - DETAILS_PER_DAY);
    expect(rows.reduce((sum, r) => sum + r.count, 0)).toBe(450);

    const res = await api.get(`/api/v1/deployments/${deploymentId}/diagnostics`);
    expect(res.body.data.refused).toHaveLength(LISTED);
    expect(res.body.data.refused_total).toBe(DETAILS_PER_DAY + 1);
    expect(res.body.data.refused[0]).toMatchObject({ reason: 'origin_not_allowed', origin: OTHER, count: 350 });
    expect(res.body.data).toMatchObject({ origins: [], origins_total: 0, last_session_at: null });
  });

  it('purges days older than seven', async () => {
    const { deploymentId } = await deploy(service, { hook_url: 'https://hooks.example/turn' });
    const { db } = service.app.store;
    const day = (daysAgo: number) => isoIn(-daysAgo * 86_400_000).slice(0, 10);
    const row = (daysAgo: number) => ({
      deployment_id: deploymentId,
      day: day(daysAgo),
      kind: 'seen' as const,
      reason: '',
      detail: 'https://hotel.example',
      count: 1,
      last_at: isoIn(-daysAgo * 86_400_000),
    });
    await db
      .insertInto('deployment_diagnostics')
      .values([row(9), row(8), row(6), row(0)])
      .execute();
    const diagnostics = new InstallDiagnostics({
      db,
      health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }),
    });
    expect((await diagnostics.read(deploymentId)).origins).toEqual([
      { origin: 'https://hotel.example', sessions: 2, last_seen_at: expect.any(String) },
    ]);
    const days = (
      await db
        .selectFrom('deployment_diagnostics')
        .select('day')
        .where('deployment_id', '=', deploymentId)
        .orderBy('day')
        .execute()
    ).map((r) => r.day);
    expect(days).toEqual([day(6), day(0)]);
  });
});
