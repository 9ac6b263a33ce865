import { afterAll, beforeAll, expect, it } from 'vitest';
import { mintToken, Widget } from '../test/concierge-kit.js';
import {
  type Client,
  client,
  createPublishedAgent,
  describeEachStore,
  expectError,
  type TestService,
  startService,
  waitFor,
} from '../test/harness.js';
import { auditOf } from './audit/audit-trail.js';

/** A valid body for each route that takes one, so that only ownership can make it fail. */
const validBodies: Record<string, unknown> = {
  'put /api/v1/agents/:id': { name: 'Renamed by someone else' },
  'put /api/v1/deployments/:id': { environment: 'development' },
  'put /api/v1/model-endpoints/:id': { name: 'Renamed by someone else' },
  'post /api/v1/model-endpoints/:id/test': { model: 'm' },
  'put /api/v1/knowledge-bases/:id': { name: 'Renamed by someone else' },
  'post /api/v1/knowledge-bases/:id/documents': { title: 'Planted', text: 'Planted text' },
  'put /api/v1/knowledge-bases/:id/documents/:document_id': { text: 'Changed by someone else' },
  'post /api/v1/deployments/:id/rotate-secret': { grace_period_s: 0 },
  'post /api/v1/deployments/:id/deactivate': {},
  'post /api/v1/conversations/:id/takeover': { name: 'Someone else' },
  'post /api/v1/conversations/:id/messages': { text: 'Hello from elsewhere', name: 'Someone else' },
  'post /api/v1/conversations/:id/turns/:turn_id/reply': { reply_text: 'Not yours' },
  'put /api/v1/users/:id': { role: 'agent' },
  'post /api/v1/agents/:id/tests': { name: 'Planted', turns: [{ visitor: 'Hi' }] },
  'put /api/v1/agents/:id/tests/:test_id': { name: 'Changed by someone else', turns: [{ visitor: 'Hi' }] },
  'post /api/v1/agents/:id/tests/run': {},
};

describeEachStore('tenant isolation', (kind) => {
  let service: TestService;
  let owner: Client;
  let intruder: Client;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    service = await startService(kind);
    const owning = await service.newCustomer('Owner');
    owner = client(service.url, owning.apiKey);
    ids.users = (
      await service.app.consoleAccounts.invite(owning.customerId, 'desk@owner.example', {
        role: 'agent',
        audit: auditOf(owning.customerId, 'admin'),
      })
    ).userId;
    intruder = client(service.url, (await service.newCustomer('Intruder')).apiKey);
    ids.agents = await createPublishedAgent(owner, 'Private agent');
    ids.jobs = (await owner.get(`/api/v1/agents/${ids.agents}/generation-status`)).body.data.job_id;
    const deployment = await owner.post('/api/v1/deployments', {
      agent_id: ids.agents,
      channel_config: { hook_url: 'https://owner.example/hook' },
    });
    ids.deployments = deployment.body.data.id;
    await owner.post(`/api/v1/deployments/${ids.deployments}/activate`);
    // A conversation with one turn, whose hook call (to a host that does not resolve here) is recorded.
    const deploymentId: string = deployment.body.data.id;
    const widget = await Widget.open(service, deploymentId);
    ids.conversations = (
      await widget.hello(await mintToken(deployment.body.data.signing_secret, deploymentId))
    ).conversation_id;
    widget.send({ type: 'user_turn', client_turn_id: 'private', text: 'My room number is 512', mode: 'text' });
    ids.turns = (await widget.next('turn_failed', 10_000)).turn_id;
    widget.close();
    ids['model-endpoints'] = (
      await owner.post('/api/v1/model-endpoints', {
        name: 'Private',
        base_url: 'https://models.example/v1',
        api_key: 'sk-owner-1234',
      })
    ).body.data.id;
    ids['knowledge-bases'] = (await owner.post('/api/v1/knowledge-bases', { name: 'Private guide' })).body.data.id;
    ids.documents = (
      await owner.post(`/api/v1/knowledge-bases/${ids['knowledge-bases']}/documents`, {
        title: 'Private',
        text: 'The safe code is 4711.',
      })
    ).body.data.id;
    ids.deliveries = await waitFor(async () => (await owner.get('/api/v1/deliveries')).body.data[0]?.id);
    ids.tests = (
      await owner.post(`/api/v1/agents/${ids.agents}/tests`, { name: 'Private', turns: [{ visitor: 'Hi' }] })
    ).body.data.id;
    ids.runs = (await owner.post(`/api/v1/agents/${ids.agents}/tests/run`, {})).body.data.id;
  });
  afterAll(() => service.close());

  it("answers 404 on every route that names another customer's resource, and changes nothing", async () => {
    const before = {
      agent: (await owner.get(`/api/v1/agents/${ids.agents}`)).body.data,
      deployment: (await owner.get(`/api/v1/deployments/${ids.deployments}`)).body.data,
      conversation: (await owner.get(`/api/v1/conversations/${ids.conversations}`)).body.data,
      deliveries: (await owner.get('/api/v1/deliveries')).body.meta.total_count,
    };
    // Public routes (the signed reply callback) prove their caller by signature; its tests cover other deployments.
    const withIds = service.app.routes.filter((r) => r.path.includes(':id') && r.auth !== false);
    expect(withIds).toHaveLength(55);
    for (const route of withIds) {
      const collection = route.path.split('/')[3]!;
      const id = ids[collection];
      if (!id) throw new Error(`no fixture id for ${route.path}: add one so the route is checked`);
      // A search is asked with its question, so only the base's owner decides the answer.
      const path =
        route.path
          .replace(':id', id)
          .replace(':version', '1')
          .replace(':turn_id', ids.turns!)
          .replace(':document_id', ids.documents!)
          .replace(':test_id', ids.tests!)
          .replace(':run_id', ids.runs!) + (route.path.endsWith('/search') ? '?q=safe' : '');
      const body = validBodies[`${route.method} ${route.path}`];
      const reply =
        route.method === 'get'
          ? await intruder.get(path)
          : route.method === 'delete'
            ? await intruder.del(path)
            : route.method === 'put'
              ? await intruder.put(path, body)
              : await intruder.post(path, body);
      expectError(reply, 404, 'not_found');
    }
    expect((await owner.get(`/api/v1/agents/${ids.agents}`)).body.data).toEqual(before.agent);
    expect((await owner.get(`/api/v1/deployments/${ids.deployments}`)).body.data).toEqual(before.deployment);
    expect((await owner.get(`/api/v1/conversations/${ids.conversations}`)).body.data).toEqual(before.conversation);
    expect((await owner.get('/api/v1/deliveries')).body.meta.total_count).toBe(before.deliveries);
    const guide = `/api/v1/knowledge-bases/${ids['knowledge-bases']}`;
    expect((await owner.get(guide)).body.data.name).toBe('Private guide');
    expect((await owner.get(`${guide}/documents`)).body.meta.total_count).toBe(1);
    expect((await owner.get(`${guide}/search?q=safe`)).body.data[0].text).toBe('The safe code is 4711.');
    expect((await owner.get(`/api/v1/model-endpoints/${ids['model-endpoints']}`)).body.data).toMatchObject({
      name: 'Private',
      api_key_last4: '1234',
    });
  });

  it("lists, filters and creates never reach another customer's rows", async () => {
    expect((await intruder.get('/api/v1/agents')).body.meta.total_count).toBe(0);
    expect((await intruder.get('/api/v1/agents?search=private')).body.meta.total_count).toBe(0);
    expect((await intruder.get('/api/v1/deployments')).body.meta.total_count).toBe(0);
    expect((await intruder.get(`/api/v1/deployments?agent_id=${ids.agents}`)).body.meta.total_count).toBe(0);
    expect(
      (await intruder.get(`/api/v1/conversations?deployment_id=${ids.deployments}&search=room`)).body.meta.total_count,
    ).toBe(0);
    expect((await intruder.get(`/api/v1/deliveries?conversation_id=${ids.conversations}`)).body.meta.total_count).toBe(
      0,
    );
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await intruder.get(`/api/v1/analytics?from=${today}&to=${tomorrow}`)).body.data.totals).toMatchObject({
      conversations: 0,
      turns: 0,
      visitors: 0,
    });
    expectError(
      await intruder.get(`/api/v1/analytics?from=${today}&to=${tomorrow}&deployment_id=${ids.deployments}`),
      404,
      'not_found',
    );
    expectError(
      await intruder.get(`/api/v1/analytics?from=${today}&to=${tomorrow}&agent_id=${ids.agents}`),
      404,
      'not_found',
    );
    expectError(await intruder.post('/api/v1/deployments', { agent_id: ids.agents }), 404, 'not_found');
    const usage = (await intruder.get('/api/v1/settings/api-key/usage')).body.data;
    expect(usage.by_route.every((r: { route: string }) => !r.route.includes(ids.agents!))).toBe(true);
    expect((await owner.get('/api/v1/agents')).body.meta.total_count).toBe(1);
  });
});
