import { scryptSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, describeEachStore, type StoreKind, startService, type TestService } from '../../test/harness.js';
import { auditOf } from '../audit/audit-trail.js';

const PASSWORD = 'correct horse battery';

/** Sign-ins that each come from the address given, as a proxy (TRUST_PROXY=1) says. */
const signIn = (service: TestService, email: string, password: string, from: string) =>
  call(service.url, 'POST', '/console/session', { body: { email, password }, headers: { 'x-forwarded-for': from } });

const tally = (statuses: number[]): Record<string, number> =>
  statuses.reduce<Record<string, number>>((counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }), {});

function suite(kind: StoreKind) {
  let service: TestService;
  let customerId: string;
  const welcomed = async (email: string) => {
    const { token } = await service.app.consoleAccounts.invite(customerId, email, {
      audit: auditOf(customerId, 'admin'),
    });
    expect((await call(service.url, 'POST', '/console/welcome', { body: { token, password: PASSWORD } })).status).toBe(
      204,
    );
  };

  beforeAll(async () => {
    service = await startService(kind, { env: { TRUST_PROXY: '1' } });
    ({ customerId } = await service.newCustomer('Harbor Hotel'));
  });
  afterAll(() => service?.close());

  it('counts an attempt before checking its password: 40 at once for one email check at most 10 and never sign in', async () => {
    await welcomed('race@example.com');
    // Each from its own address, so only the email's count can stop them.
    const attempts = Array.from({ length: 40 }, (_, i) =>
      signIn(service, 'race@example.com', i === 39 ? PASSWORD : `guess ${i}`, `203.0.113.${i + 1}`),
    );
    const statuses = (await Promise.all(attempts)).map((r) => r.status);
    const counts = tally(statuses);
    expect(counts['204']).toBeUndefined();
    expect(counts['401']).toBe(10);
    expect(counts['429']).toBe(30);
  });

  it('counts IPv6 clients per /56: new addresses in the same prefix are refused once it failed 10 times', async () => {
    for (let i = 0; i < 10; i++)
      expect(
        (
          await signIn(
            service,
            `v6-${i}@example.com`,
            'wrong',
            `2001:db8:aa:bb${i.toString(16).padStart(2, '0')}::${i + 1}`,
          )
        ).status,
      ).toBe(401);
    const samePrefix = await signIn(service, 'v6-next@example.com', 'wrong', '2001:db8:aa:bbff:1234::9');
    expect(samePrefix.status).toBe(429);
    expect(Number(samePrefix.headers.get('retry-after'))).toBeGreaterThan(800);
    expect((await signIn(service, 'v6-next@example.com', 'wrong', '2001:db8:aa:cc00::1')).status).toBe(401);
  });

  it("hashes new passwords at OWASP's scrypt cost and upgrades an older hash at the next sign-in", async () => {
    await welcomed('old@example.com');
    const stored = () =>
      service.app.store.db
        .selectFrom('console_users')
        .select('password_hash')
        .where('email', '=', 'old@example.com')
        .executeTakeFirstOrThrow();
    expect((await stored()).password_hash).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    // A hash written by the earlier cost (N=2^15), as an older version stored it.
    const salt = Buffer.from('0123456789abcdef');
    const older = [
      'scrypt',
      32768,
      8,
      1,
      salt.toString('base64url'),
      scryptSync(PASSWORD, salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }).toString('base64url'),
    ].join('$');
    await service.app.store.db
      .updateTable('console_users')
      .set({ password_hash: older })
      .where('email', '=', 'old@example.com')
      .execute();
    expect((await signIn(service, 'old@example.com', PASSWORD, '198.51.100.7')).status).toBe(204);
    const upgraded = (await stored()).password_hash!;
    expect(upgraded).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect((await signIn(service, 'old@example.com', PASSWORD, '198.51.100.7')).status).toBe(204);
    expect((await stored()).password_hash).toBe(upgraded);
  });
}

describeEachStore('console sign-in limits', suite);

describe('console sign-in flood', () => {
  let service: TestService;
  let hookServer: ReturnType<typeof createServer>;

  beforeAll(async () => {
    // Connection: close, so no call reuses a socket and each one looks the name up again.
    hookServer = createServer((_req, res) => res.writeHead(200, { connection: 'close' }).end('ok'));
    await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
    service = await startService('sqlite', { env: { TRUST_PROXY: '1' }, hookAllowedHosts: '*@localhost' });
  });
  afterAll(async () => {
    await service?.close();
    await new Promise<void>((resolve) => hookServer.close(() => resolve()));
  });

  it('keeps hook calls to a host name on time while sign-ins are flooded; past a short queue sign-ins get 429', async () => {
    const { apiKey } = await service.newCustomer();
    const api = client(service.url, apiKey);
    const agent = await api.post('/api/v1/agents', { name: 'Front desk' });
    // A host name, so the call needs a DNS lookup, on the thread pool that password hashing used to fill.
    const hookUrl = `http://localhost:${(hookServer.address() as AddressInfo).port}/hook`;
    const created = await api.post('/api/v1/deployments', {
      agent_id: agent.body.data.agent_id,
      channel_config: { hook_url: hookUrl },
      runtime_config: { hook_timeout_ms: 1000 },
    });
    expect(created.status).toBe(201);
    const testHook = () => api.post(`/api/v1/deployments/${created.body.data.id}/test-hook`);

    const quiet = await testHook();
    expect(quiet.body.data).toMatchObject({ outcome: 'succeeded', error: null });

    // Unknown emails from as many addresses: no limit stops them before their hash.
    const flood = Array.from({ length: 150 }, (_, i) =>
      signIn(service, `nobody-${i}@example.com`, 'a guess', `10.${i >> 8}.${i & 255}.9`),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const during = await testHook();
    const statuses = (await Promise.all(flood)).map((r) => r.status);
    expect(during.body.data).toMatchObject({ outcome: 'succeeded', error: null, response: { status: 200 } });
    const counts = tally(statuses);
    expect(Object.keys(counts).sort()).toEqual(['401', '429']);
    expect(counts['401']).toBeGreaterThan(0);
  });
});
