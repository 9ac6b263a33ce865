import { expect, it } from 'vitest';
import { deploy, mintToken, serviceWithCustomer, Widget } from '../../test/concierge-kit.js';
import { type Client, client, createPublishedAgent, describeEachStore, expectError } from '../../test/harness.js';

describeEachStore('agent versions and pinned deployments', (kind) => {
  const suite = serviceWithCustomer(kind);

  /** Replaces the draft with `greeting` and publishes it. */
  async function publishGreeting(api: Client, agentId: string, greeting: string) {
    const spec = (await api.get(`/api/v1/agents/${agentId}/spec`)).body.data.agent_spec;
    expect((await api.put(`/api/v1/agents/${agentId}`, { draft_spec: { ...spec, greeting } })).status).toBe(200);
    return api.post(`/api/v1/agents/${agentId}/publish`);
  }

  it('keeps each published spec as an immutable version, newest first; a publish without a change makes none', async () => {
    const api = client(suite.service().url, (await suite.service().newCustomer('Versions')).apiKey);
    const agentId = await createPublishedAgent(api, 'Versioned');
    const first = (await api.get(`/api/v1/agents/${agentId}/spec`)).body.data.agent_spec;
    expect((await publishGreeting(api, agentId, 'Second hello')).body.data.version).toBe(2);
    expect((await api.post(`/api/v1/agents/${agentId}/publish`)).body.data.version).toBe(2);

    const list = await api.get(`/api/v1/agents/${agentId}/versions?per_page=1`);
    expect(list.status).toBe(200);
    expect(list.body.meta).toMatchObject({ page: 1, per_page: 1, total_count: 2, total_pages: 2 });
    expect(list.body.data).toEqual([
      { version: 2, agent_spec: { ...first, greeting: 'Second hello' }, published_at: expect.any(String) },
    ]);
    const one = await api.get(`/api/v1/agents/${agentId}/versions/1`);
    expect(one.body.data).toEqual({ version: 1, agent_spec: first, published_at: expect.any(String) });
    // A later edit of the draft changes no published version.
    await api.put(`/api/v1/agents/${agentId}`, { draft_spec: { greeting: 'Unpublished' } });
    expect((await api.get(`/api/v1/agents/${agentId}/versions/1`)).body.data.agent_spec).toEqual(first);

    expectError(await api.get(`/api/v1/agents/${agentId}/versions/3`), 404, 'not_found');
    // A malformed version is answered like an unknown one, as every malformed id is.
    expectError(await api.get(`/api/v1/agents/${agentId}/versions/zero`), 404, 'not_found');
  });

  it('pins a deployment to an existing version only; null follows the latest', async () => {
    const api = client(suite.service().url, (await suite.service().newCustomer('Pins')).apiKey);
    const agentId = await createPublishedAgent(api, 'Pinned');
    const created = await api.post('/api/v1/deployments', { agent_id: agentId, agent_version: 1 });
    expect(created.status).toBe(201);
    expect(created.body.data.agent_version).toBe(1);
    const missing = await api.post('/api/v1/deployments', { agent_id: agentId, agent_version: 9 });
    expectError(missing, 400, 'invalid_request');
    expect(missing.body.error.details).toEqual([
      { path: 'agent_version', message: 'The agent has no published version 9' },
    ]);
    expectError(
      await api.put(`/api/v1/deployments/${created.body.data.id}`, { agent_version: 2 }),
      400,
      'invalid_request',
    );
    const unpinned = await api.put(`/api/v1/deployments/${created.body.data.id}`, { agent_version: null });
    expect(unpinned.body.data.agent_version).toBeNull();
    expect((await api.post('/api/v1/deployments', { agent_id: agentId })).body.data.agent_version).toBeNull();
  });

  it('a conversation keeps the version it started with; a publish is rolled back by pinning the previous version', async () => {
    const { api, deploymentId, secret } = await deploy(suite.service(), { hook_url: suite.customer().hookUrl });
    const agentId = (await api.get(`/api/v1/deployments/${deploymentId}`)).body.data.agent_id;
    const open = async (resume?: { conversation_id: string }) => {
      const widget = await Widget.open(suite.service(), deploymentId);
      const ready = await widget.hello(await mintToken(secret, deploymentId), resume ? { ...resume, last_seq: 0 } : {});
      widget.close();
      return ready;
    };
    const versionOf = async (conversationId: string) =>
      (
        await suite
          .service()
          .app.store.db.selectFrom('conversations')
          .select('agent_version')
          .where('id', '=', conversationId)
          .executeTakeFirstOrThrow()
      ).agent_version;

    const before = await open();
    const firstGreeting = before.agent.greeting;
    await publishGreeting(api, agentId, 'Welcome to version two');
    const after = await open();
    expect(after.agent.greeting).toBe('Welcome to version two');
    // Resumed after the publish, the first conversation still has the agent it started with.
    expect((await open({ conversation_id: before.conversation_id })).agent.greeting).toBe(firstGreeting);

    expect((await api.put(`/api/v1/deployments/${deploymentId}`, { agent_version: 1 })).status).toBe(200);
    const rolledBack = await open();
    expect(rolledBack.agent.greeting).toBe(firstGreeting);
    expect((await open({ conversation_id: after.conversation_id })).agent.greeting).toBe('Welcome to version two');
    expect([
      await versionOf(before.conversation_id),
      await versionOf(after.conversation_id),
      await versionOf(rolledBack.conversation_id),
    ]).toEqual([1, 2, 1]);
  });
});
