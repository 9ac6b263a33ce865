import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  call,
  type Client,
  client,
  createReadyAgent,
  describeEachStore,
  expectError,
  type TestService,
  startService,
} from '../../test/harness.js';
import { isoIn } from '../shared/time.js';
import { secretDigest } from '../shared/secret-digest.js';

/** README, The management API: safe retries for POST routes under /api/v1. */
describeEachStore('Idempotency-Key', (kind) => {
  let service: TestService;
  let api: Client;
  let apiKey: string;
  let customerId: string;
  beforeAll(async () => {
    service = await startService(kind);
    ({ apiKey, customerId } = await service.newCustomer());
    api = client(service.url, apiKey);
  });
  afterAll(() => service.close());

  const agentCount = async () => (await api.get('/api/v1/agents')).body.meta.total_count as number;
  const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

  it('replays the first response to a repeat, marked Idempotent-Replayed, and creates nothing more', async () => {
    const before = await agentCount();
    const first = await api.post('/api/v1/agents', { name: 'Concierge' }, withKey('create-1'));
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await api.post('/api/v1/agents', { name: 'Concierge' }, withKey('create-1'));
    expect([again.status, again.headers.get('idempotent-replayed'), again.headers.get('location')]).toEqual([
      202,
      'true',
      first.headers.get('location'),
    ]);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await agentCount()).toBe(before + 1);
  });

  it('refuses the key used for another body or another path with 409 idempotency_conflict', async () => {
    await api.post('/api/v1/agents', { name: 'Original' }, withKey('used-once'));
    expectError(
      await api.post('/api/v1/agents', { name: 'Changed' }, withKey('used-once')),
      409,
      'idempotency_conflict',
    );
    const agentId = await createReadyAgent(api);
    expectError(
      await api.post(`/api/v1/agents/${agentId}/publish`, undefined, withKey('used-once')),
      409,
      'idempotency_conflict',
    );
  });

  it('runs concurrent repeats once: each waits for the first and gets its response', async () => {
    const before = await agentCount();
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => api.post('/api/v1/agents', { name: 'Raced' }, withKey('race'))),
    );
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(replies.map((r) => r.body.data.agent_id)).size).toBe(1);
    expect(replies.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
    expect(await agentCount()).toBe(before + 1);
  });

  it('keeps nothing for a request that failed: its retry runs afresh', async () => {
    const missing = await api.post(
      '/api/v1/deployments',
      { agent_id: '00000000-0000-4000-8000-000000000000' },
      withKey('deploy-1'),
    );
    expectError(missing, 404, 'not_found');
    const agentId = await createReadyAgent(api);
    const created = await api.post('/api/v1/deployments', { agent_id: agentId }, withKey('deploy-2'));
    expect(created.status).toBe(201);
    const retried = await api.post('/api/v1/deployments', { agent_id: agentId }, withKey('deploy-2'));
    // The signing secret is shown once, and so once more to the same request's retry: it is that response.
    expect([retried.status, retried.body.data.signing_secret]).toEqual([201, created.body.data.signing_secret]);
  });

  it('keeps no secret readable in the store: the key as a hash, a response sealed with it, and replays still whole', async () => {
    const rotated = await api.post('/api/v1/settings/api-key/rotate', {}, withKey('rotate-once'));
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.data.key;
    expect(newKey).toMatch(/^vak_/);
    apiKey = newKey;
    api = client(service.url, apiKey);
    const agentId = await createReadyAgent(api);
    const deployed = await api.post('/api/v1/deployments', { agent_id: agentId }, withKey('deploy-secret'));
    const secret: string = deployed.body.data.signing_secret;
    const rows = await service.app.store.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('customer_id', '=', customerId)
      .execute();
    const stored = JSON.stringify(rows);
    for (const hidden of [newKey, secret, 'rotate-once', 'deploy-secret']) expect(stored).not.toContain(hidden);
    expect(rows.length).toBeGreaterThanOrEqual(2);

    const replayedKey = await api.post('/api/v1/settings/api-key/rotate', {}, withKey('rotate-once'));
    expect([replayedKey.status, replayedKey.headers.get('idempotent-replayed'), replayedKey.body]).toEqual([
      200,
      'true',
      rotated.body,
    ]);
    const replayedSecret = await api.post('/api/v1/deployments', { agent_id: agentId }, withKey('deploy-secret'));
    expect([replayedSecret.headers.get('idempotent-replayed'), replayedSecret.body.data.signing_secret]).toEqual([
      'true',
      secret,
    ]);
  });

  it('holds per customer, across a restart, for 24 hours', async () => {
    const other = client(service.url, (await service.newCustomer('Other')).apiKey);
    const mine = await api.post('/api/v1/agents', { name: 'Mine' }, withKey('shared-key'));
    const theirs = await other.post('/api/v1/agents', { name: 'Theirs' }, withKey('shared-key'));
    expect([mine.status, theirs.status, theirs.headers.get('idempotent-replayed')]).toEqual([202, 202, null]);

    service = await service.restart();
    api = client(service.url, apiKey);
    const replayed = await api.post('/api/v1/agents', { name: 'Mine' }, withKey('shared-key'));
    expect([replayed.headers.get('idempotent-replayed'), replayed.body]).toEqual(['true', mine.body]);

    // A key older than 24 h is gone: the same request runs again, and the next start purges such keys.
    await service.app.store.db
      .updateTable('idempotency_keys')
      .set({ created_at: isoIn(-25 * 3_600_000) })
      .where('customer_id', '=', customerId)
      .where('key', '=', secretDigest('shared-key'))
      .execute();
    const fresh = await api.post('/api/v1/agents', { name: 'Mine' }, withKey('shared-key'));
    expect([fresh.status, fresh.headers.get('idempotent-replayed')]).toEqual([202, null]);
    expect(fresh.body.data.agent_id).not.toBe(mine.body.data.agent_id);
    await service.app.store.db
      .updateTable('idempotency_keys')
      .set({ created_at: isoIn(-25 * 3_600_000) })
      .where('customer_id', '=', customerId)
      .execute();
    service = await service.restart();
    api = client(service.url, apiKey);
    await expect
      .poll(
        async () =>
          (
            await service.app.store.db
              .selectFrom('idempotency_keys')
              .select('key')
              .where('customer_id', '=', customerId)
              .execute()
          ).length,
      )
      .toBe(0);
  });

  it('refuses a malformed key with 400, and ignores the header on routes that are not POSTs', async () => {
    for (const key of ['', 'x'.repeat(256)]) {
      const res = await api.post('/api/v1/agents', { name: 'Bad key' }, withKey(key));
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details).toEqual([
        { path: 'headers.idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
      ]);
    }
    const listed = await call(service.url, 'GET', '/api/v1/agents', {
      key: apiKey,
      headers: { 'idempotency-key': 'list' },
    });
    expect([listed.status, listed.headers.get('idempotent-replayed')]).toEqual([200, null]);
  });
});
