import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  client,
  createPublishedAgent,
  describeEachStore,
  TEST_DATABASE_URL,
  type TestService,
  startService,
  waitFor,
} from '../../test/harness.js';
import { MIGRATION_LOCK } from './db.js';
import type { AgentGenerator } from '../agents/generation/agent-generator.js';
import { isoIn, isoNow } from '../shared/time.js';

const stuck: AgentGenerator = { generate: () => new Promise(() => undefined) };

describeEachStore('durability across restarts', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(() => service.close());

  it('keeps customers, keys, agents and deployments', async () => {
    const { apiKey } = await service.newCustomer();
    const api = client(service.url, apiKey);
    const agentId = await createPublishedAgent(api, 'Survivor');
    const deployment = (
      await api.post('/api/v1/deployments', { agent_id: agentId, channel_config: { hook_url: 'https://x.example/h' } })
    ).body.data;
    await api.post(`/api/v1/deployments/${deployment.id}/activate`);
    const before = [
      (await api.get(`/api/v1/agents/${agentId}`)).body.data,
      (await api.get(`/api/v1/deployments/${deployment.id}`)).body.data,
    ];

    service = await service.restart();
    const again = client(service.url, apiKey);
    expect([
      (await again.get(`/api/v1/agents/${agentId}`)).body.data,
      (await again.get(`/api/v1/deployments/${deployment.id}`)).body.data,
    ]).toEqual(before);
  });

  it('hands a running job back on a graceful stop, and the next start finishes it', async () => {
    service = await service.restart({ generator: stuck });
    const { apiKey } = await service.newCustomer();
    const created = (await client(service.url, apiKey).post('/api/v1/agents', { name: 'Interrupted' })).body.data;
    await waitFor(
      async () => (await client(service.url, apiKey).get(created.polling_url)).body.data.status === 'running',
    );

    service = await service.restart({});
    const api = client(service.url, apiKey);
    const job = await waitFor(async () => {
      const j = (await api.get(created.polling_url)).body.data;
      return j.status === 'succeeded' && j;
    });
    expect(job.progress).toBe(100);
    expect((await api.get(`/api/v1/agents/${created.agent_id}`)).body.data.status).toBe('draft');
  });

  it('takes over a job left running by a killed node once its lease has passed, and fails one out of attempts', async () => {
    const { customerId, apiKey } = await service.newCustomer();
    const { db } = service.app.store;
    // What a SIGKILL leaves behind: rows still 'running' under a lease that nobody will renew.
    const plant = async (name: string, attempts: number) => {
      const agentId = randomUUID();
      const jobId = randomUUID();
      const now = isoNow();
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('agents')
          .values({
            id: agentId,
            customer_id: customerId,
            name,
            description: null,
            status: 'generating',
            version: 0,
            agent_spec: null,
            draft_spec: null,
            generated_spec: null,
            test_mode_enabled: 0,
            project_id: null,
            knowledge_base_id: null,
            search_text: name.toLowerCase(),
            created_at: now,
            updated_at: now,
          })
          .execute();
        await trx
          .insertInto('jobs')
          .values({
            id: jobId,
            customer_id: customerId,
            agent_id: agentId,
            kind: 'generate_agent',
            status: 'running',
            progress: 40,
            error: null,
            attempts,
            lease_expires_at: isoIn(-1000),
            created_at: now,
            updated_at: now,
          })
          .execute();
      });
      return { agentId, url: `/api/v1/jobs/${jobId}/status` };
    };
    const resumable = await plant('Killed once', 1);
    const exhausted = await plant('Killed thrice', 3);

    const api = client(service.url, apiKey);
    await waitFor(async () => (await api.get(resumable.url)).body.data.status === 'succeeded');
    expect((await api.get(`/api/v1/agents/${resumable.agentId}`)).body.data.status).toBe('draft');
    const failed = await waitFor(async () => {
      const j = (await api.get(exhausted.url)).body.data;
      return j.status === 'failed' && j;
    });
    expect(failed.error).toMatch(/interrupted/);
    expect((await api.get(`/api/v1/agents/${exhausted.agentId}`)).body.data.status).toBe('failed');
  });
});

describe.skipIf(!TEST_DATABASE_URL)('migrating PostgreSQL', () => {
  it('waits while another start (or a schema being dropped) holds the migration lock', async () => {
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    await holder.query('select pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK]);
    let started = false;
    const starting = startService('postgres').then((service) => {
      started = true;
      return service;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(started).toBe(false);
    await holder.end(); // its session ends, and the lock with it
    const service = await starting;
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    await service.close();
  });
});
