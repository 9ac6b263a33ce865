import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../logger.js';
import { StoreHealth } from '../../store/store-health.js';
import { InstallDiagnostics } from './install-diagnostics.js';
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
    const { api, deploymentId, secret } = await deploy(service, { hook_url: 'https://hooks.example/turn', allowed_origins: [hotel] });
    await expect(Widget.open(service, deploymentId, { origin: 'https://copycat.example' })).rejects.toThrow('HTTP 403');
    await expect(Widget.open(service, deploymentId, { origin: 'https://copycat.example' })).rejects.toThrow('HTTP 403');
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
    expect((await api.post(`/api/v1/deployments/${deploymentId}/deactivate`)).status).toBe(200);
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
    const diagnostics = new InstallDiagnostics({ db, health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }) });
    diagnostics.refused(deploymentId, 'deployment_inactive', undefined);
    diagnostics.refused(deploymentId, 'deployment_inactive', undefined);
    await sql`alter table deployment_diagnostics rename to deployment_diagnostics_away`.execute(db);
    // The write starts now and fails; one more refusal is counted while it is under way.
    const failing = diagnostics.read(deploymentId).catch(() => undefined);
    diagnostics.refused(deploymentId, 'deployment_inactive', undefined);
    await failing;
    await sql`alter table deployment_diagnostics_away rename to deployment_diagnostics`.execute(db);
    expect((await diagnostics.read(deploymentId)).refused).toEqual([{ reason: 'deployment_inactive', origin: null, cause: null, count: 3, last_at: expect.any(String) }]);
  });
});

