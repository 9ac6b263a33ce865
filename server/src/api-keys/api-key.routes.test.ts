import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, describeEachStore, expectError, type TestService, startService } from '../../test/harness.js';
import { generateApiKey, hashApiKey } from './api-key.format.js';

describeEachStore('API key', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(() => service.close());

  describe('authentication', () => {
    it.each([
      ['no header', undefined],
      ['a malformed header', 'Basic abc'],
      ['a well-formed key nobody was given', `Bearer ${generateApiKey()}`],
      ['a key with a bad checksum', 'Bearer vak_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa000000'],
      ['a JWT', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
    ])('answers 401 with WWW-Authenticate for %s', async (_what, authorization) => {
      const res = await call(service.url, 'GET', '/api/v1/agents', authorization ? { headers: { authorization } } : {});
      expectError(res, 401, 'unauthorized');
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    });

    it('stores only the hash of the key', async () => {
      const { customerId, apiKey } = await service.newCustomer();
      const rows = await service.app.store.db
        .selectFrom('api_keys')
        .selectAll()
        .where('customer_id', '=', customerId)
        .execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.key_hash).toBe(hashApiKey(apiKey));
      expect(JSON.stringify(rows)).not.toContain(apiKey);
    });

    it('accepts the scheme case-insensitively', async () => {
      const { apiKey } = await service.newCustomer();
      expect(
        (await call(service.url, 'GET', '/api/v1/agents', { headers: { authorization: `bearer ${apiKey}` } })).status,
      ).toBe(200);
    });
  });

  describe('read and rotate', () => {
    it('reads the key record without the key', async () => {
      const { apiKey } = await service.newCustomer();
      const res = await client(service.url, apiKey).get('/api/v1/settings/api-key');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.data).sort()).toEqual([
        'created_at',
        'id',
        'last4',
        'last_used_at',
        'prefix',
        'previous_key_expires_at',
      ]);
      expect(res.body.data).toMatchObject({
        prefix: apiKey.slice(0, 8),
        last4: apiKey.slice(-4),
        previous_key_expires_at: null,
      });
      expect(JSON.stringify(res.body)).not.toContain(apiKey);
    });

    it('rotates nothing on a bare POST, and keeps the old key an hour by default', async () => {
      const { apiKey } = await service.newCustomer();
      const api = client(service.url, apiKey);
      const bare = await api.post('/api/v1/settings/api-key/rotate');
      expectError(bare, 400, 'invalid_request');
      expect(bare.body.error.details).toEqual([{ path: 'body', message: 'a JSON body is required ({} will do)' }]);
      const before = Date.now();
      const res = await api.post('/api/v1/settings/api-key/rotate', {});
      expect(Date.parse(res.body.data.previous_key_expires_at) - before).toBeGreaterThanOrEqual(3600_000 - 1000);
      expect((await api.get('/api/v1/agents')).status).toBe(200);
    });

    it('rotates without grace: the old key fails at once, the new one works', async () => {
      const { apiKey } = await service.newCustomer();
      const res = await client(service.url, apiKey).post('/api/v1/settings/api-key/rotate', { grace_period_s: 0 });
      expect(res.status).toBe(200);
      const { key, previous_key_expires_at, prefix, last4 } = res.body.data;
      expect(key).toMatch(/^vak_[0-9A-Za-z]{38}$/);
      expect(key).not.toBe(apiKey);
      expect(previous_key_expires_at).toBeNull();
      expect({ prefix, last4 }).toEqual({ prefix: key.slice(0, 8), last4: key.slice(-4) });
      expectError(await client(service.url, apiKey).get('/api/v1/agents'), 401, 'unauthorized');
      expect((await client(service.url, key).get('/api/v1/agents')).status).toBe(200);
      const record = await client(service.url, key).get('/api/v1/settings/api-key');
      expect(JSON.stringify(record.body)).not.toContain(key);
    });

    it('rotates with grace: both keys work until the grace ends, then only the new one', async () => {
      const { apiKey } = await service.newCustomer();
      const before = Date.now();
      const res = await client(service.url, apiKey).post('/api/v1/settings/api-key/rotate', { grace_period_s: 1 });
      const { key, previous_key_expires_at } = res.body.data;
      expect(Date.parse(previous_key_expires_at) - before).toBeGreaterThanOrEqual(900);
      expect((await client(service.url, apiKey).get('/api/v1/agents')).status).toBe(200);
      expect((await client(service.url, key).get('/api/v1/settings/api-key')).body.data.previous_key_expires_at).toBe(
        previous_key_expires_at,
      );
      await new Promise((r) => setTimeout(r, Date.parse(previous_key_expires_at) - Date.now() + 50));
      expectError(await client(service.url, apiKey).get('/api/v1/agents'), 401, 'unauthorized');
      expect((await client(service.url, key).get('/api/v1/agents')).status).toBe(200);
      expect(
        (await client(service.url, key).get('/api/v1/settings/api-key')).body.data.previous_key_expires_at,
      ).toBeNull();
    });

    it('a second rotation ends the first grace for the oldest key no later than the new one', async () => {
      const { apiKey: k1 } = await service.newCustomer();
      const k2 = (await client(service.url, k1).post('/api/v1/settings/api-key/rotate', { grace_period_s: 3600 })).body
        .data.key;
      const k3 = (await client(service.url, k2).post('/api/v1/settings/api-key/rotate', { grace_period_s: 0 })).body
        .data.key;
      expectError(await client(service.url, k1).get('/api/v1/agents'), 401, 'unauthorized');
      expectError(await client(service.url, k2).get('/api/v1/agents'), 401, 'unauthorized');
      expect((await client(service.url, k3).get('/api/v1/agents')).status).toBe(200);
    });

    it('refuses bad grace periods', async () => {
      const api = client(service.url, (await service.newCustomer()).apiKey);
      for (const body of [
        { grace_period_s: -1 },
        { grace_period_s: 604_801 },
        { grace_period_s: '10' },
        { other: 1 },
      ]) {
        expectError(await api.post('/api/v1/settings/api-key/rotate', body), 400, 'invalid_request');
      }
      expect((await api.get('/api/v1/agents')).status).toBe(200);
    });
  });

  describe('usage', () => {
    it('counts this customer’s requests per day and per route pattern, errors included', async () => {
      const { apiKey } = await service.newCustomer();
      const api = client(service.url, apiKey);
      const other = client(service.url, (await service.newCustomer('Other')).apiKey);
      await api.get('/api/v1/agents');
      await api.get('/api/v1/agents');
      await api.get('/api/v1/agents/00000000-0000-4000-8000-000000000000');
      await api.get('/api/v1/agents?per_page=0');
      await api.get('/api/v1/no-such-route');
      await other.get('/api/v1/agents');
      await call(service.url, 'GET', '/api/v1/agents');

      const res = await api.get('/api/v1/settings/api-key/usage?days=7');
      expect(res.status).toBe(200);
      const usage = res.body.data;
      expect(usage.total_requests).toBe(5);
      expect(usage.total_errors).toBe(3);
      expect(usage.daily).toHaveLength(7);
      const today = new Date().toISOString().slice(0, 10);
      expect(usage.daily.at(-1)).toEqual({ date: today, requests: 5, errors: 3 });
      expect(usage.daily[0].date < today).toBe(true);
      expect(usage.by_route).toEqual([
        { method: 'GET', route: '/api/v1/agents', requests: 3 },
        { method: 'GET', route: '(unmatched)', requests: 1 },
        { method: 'GET', route: '/api/v1/agents/:id', requests: 1 },
      ]);
      expect(usage.period_start).toBe(`${usage.daily[0].date}T00:00:00.000Z`);

      const last = await api.get('/api/v1/settings/api-key');
      expect(Date.now() - Date.parse(last.body.data.last_used_at)).toBeLessThan(10_000);
    });

    it('defaults to 30 days and refuses out-of-range days', async () => {
      const api = client(service.url, (await service.newCustomer()).apiKey);
      expect((await api.get('/api/v1/settings/api-key/usage')).body.data.daily).toHaveLength(30);
      expect((await api.get('/api/v1/settings/api-key/usage?days=90')).body.data.daily).toHaveLength(90);
      for (const days of ['0', '91', 'x', '2.5'])
        expectError(await api.get(`/api/v1/settings/api-key/usage?days=${days}`), 400, 'invalid_request');
    });

    it('survives a restart: counts are flushed on shutdown', async () => {
      const { apiKey } = await service.newCustomer();
      await client(service.url, apiKey).get('/api/v1/deployments');
      service = await service.restart();
      const usage = (await client(service.url, apiKey).get('/api/v1/settings/api-key/usage?days=1')).body.data;
      expect(usage.by_route).toContainEqual({ method: 'GET', route: '/api/v1/deployments', requests: 1 });
    });
  });
});

describe('rate limit', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService('sqlite', { rateLimitPerMinute: 5 });
  });
  afterAll(() => service.close());

  it('limits per key with RateLimit-* headers, then 429 with Retry-After; other keys are unaffected', async () => {
    const api = client(service.url, (await service.newCustomer()).apiKey);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.get('/api/v1/agents');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('5');
      expect(res.headers.get('ratelimit-policy')).toBe('5;w=60');
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      remaining.push(res.headers.get('ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const limited = await api.get('/api/v1/agents');
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');

    const other = client(service.url, (await service.newCustomer('Other')).apiKey);
    expect((await other.get('/api/v1/agents')).status).toBe(200);
  });
});
