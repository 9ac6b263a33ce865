import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  client,
  createReadyAgent,
  describeEachStore,
  expectError,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../../test/harness.js';
import { deployAgent, startCustomerServer } from '../../../test/concierge-kit.js';
import { transcriptEventBodies } from '../outbound.schemas.js';
import { complete, startModelServer } from '../../../test/model-server.js';
import { scriptedEvaluator } from '../../../test/quality-model.js';

type ModelServer = Awaited<ReturnType<typeof startModelServer>>;
type CustomerServer = Awaited<ReturnType<typeof startCustomerServer>>;

describeEachStore('tests before publishing, analysis after every conversation', (kind: StoreKind) => {
  let service: TestService;
  let model: ModelServer;
  let customer: CustomerServer;
  const state = { analyses: 0 };

  beforeAll(async () => {
    model = await startModelServer();
    model.state.behaviour = scriptedEvaluator(state);
    customer = await startCustomerServer((call, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ reply_text: `Hook says: ${call.body.text}` })),
    );
    service = await startService(kind);
  });
  afterAll(async () => {
    await service?.close();
    await model?.close();
    await customer?.close();
  });

  const spec = (endpointId: string, more: Record<string, unknown> = {}) => ({
    language: 'en-US',
    instructions: 'Book tables at the Harbor Hotel.',
    responder: {
      type: 'model',
      endpoint_id: endpointId,
      model: 'test-model',
      tools: [
        {
          name: 'book_table',
          description: 'Books a table',
          parameters: { type: 'object', properties: { party_size: { type: 'integer' }, time: { type: 'string' } } },
          // Nothing listens here: a mocked tool must never be called.
          url: 'http://127.0.0.1:9/book',
        },
      ],
    },
    analysis: {
      summary: true,
      fields: [
        { name: 'party_size', type: 'number', description: 'How many people the table is for' },
        {
          name: 'topic',
          type: 'enum',
          description: 'What the visitor asked about',
          values: ['dining', 'spa', 'other'],
        },
      ],
      criteria: [{ id: 'booked_table', description: 'The visitor booked a table' }],
    },
    ...more,
  });

  const hotel = async () => {
    const { apiKey } = await service.newCustomer('Harbor Hotel');
    const api = client(service.url, apiKey);
    const endpoint = await api.post('/api/v1/model-endpoints', { name: 'Model', base_url: model.baseUrl });
    const agent = await deployAgent(service, api, spec(endpoint.body.data.id), {
      channel_config: { transcript_hook_url: customer.transcriptUrl },
    });
    return { api, agent, endpointId: endpoint.body.data.id as string };
  };

  const BOOKING = {
    name: 'Books a table',
    turns: [{ visitor: 'I would like to book a table for 4 at 7pm' }],
    expect: [
      { type: 'contains', text: 'TABLE FOR 4' },
      { type: 'not_contains', text: 'sorry' },
      { type: 'regex', text: 'booked at \\d{2}:\\d{2}' },
      { type: 'tool_called', name: 'book_table', arguments: { party_size: 4 } },
      { type: 'judge', criterion: 'The agent is polite' },
    ],
    mocks: { tools: { book_table: { ok: true, table: 7 } } },
  };

  it('runs scripted and simulated tests through the real responder, mocks tools, and keeps the run', async () => {
    const { api, agent } = await hotel();
    const created = await api.post(`/api/v1/agents/${agent.agentId}/tests`, BOOKING);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Books a table', agent_id: agent.agentId });
    await api.post(`/api/v1/agents/${agent.agentId}/tests`, {
      name: 'Offers a discount',
      turns: [{ visitor: 'Is the spa open?' }],
      expect: [
        { type: 'contains', text: 'spa' },
        { type: 'judge', criterion: 'The agent offers a discount' },
      ],
    });
    await api.post(`/api/v1/agents/${agent.agentId}/tests`, {
      name: 'Simulated diner',
      simulation: { persona: 'A hungry guest', goal: 'Book a table for four', max_turns: 3 },
      expect: [{ type: 'tool_called', name: 'book_table' }, { type: 'handed_off' }],
    });
    const run = await api.post(`/api/v1/agents/${agent.agentId}/tests/run`, {});
    expect(run.status).toBe(200);
    const byName = Object.fromEntries(run.body.data.results.map((r: { name: string }) => [r.name, r]));
    expect(run.body.data).toMatchObject({ status: 'failed', passed: 1, failed: 2, version: null });
    const booking = byName['Books a table'];
    expect(booking.passed).toBe(true);
    expect(booking.verdicts.map((v: { passed: boolean }) => v.passed)).toEqual([true, true, true, true, true]);
    expect(booking.verdicts[4].reason).toBe('The agent was polite.');
    expect(booking.tool_calls).toEqual([{ name: 'book_table', arguments: { party_size: 4, time: '19:00' } }]);
    expect(booking.transcript).toEqual([
      { role: 'visitor', text: 'I would like to book a table for 4 at 7pm' },
      { role: 'agent', text: 'Your table for 4 is booked at 19:00. Enjoy your dinner!' },
    ]);
    expect(byName['Offers a discount'].verdicts[1]).toMatchObject({
      passed: false,
      reason: 'It never offered a discount.',
    });
    const simulated = byName['Simulated diner'];
    expect(simulated.transcript[0]).toEqual({ role: 'visitor', text: 'Can I book a table for 4?' });
    expect(simulated.verdicts.map((v: { passed: boolean }) => v.passed)).toEqual([true, false]);
    // The mocked tool's record says what the model called, and nothing reached its url.
    const tools = await api.get(`/api/v1/deliveries?conversation_id=${booking.conversation_id}&kind=tool`);
    expect(JSON.parse(tools.body.data[0].request.body)).toMatchObject({
      tool: 'book_table',
      arguments: { party_size: 4 },
    });
    expect(tools.body.data[0].outcome).toBe('succeeded');
    // Kept, newest first.
    const runs = await api.get(`/api/v1/agents/${agent.agentId}/test-runs`);
    expect(runs.body.data.map((r: { id: string }) => r.id)).toEqual([run.body.data.id]);
    expect(
      (await api.get(`/api/v1/agents/${agent.agentId}/test-runs/${run.body.data.id}`)).body.data.results,
    ).toHaveLength(3);
    // Test runs stay out of analysis: nothing is analysed of them.
    await new Promise((r) => setTimeout(r, 300));
    expect(state.analyses).toBe(0);
  });

  it('refuses a publish whose required tests fail, naming them, and publishes once they pass', async () => {
    const { api, agent, endpointId } = await hotel();
    const failing = await api.post(`/api/v1/agents/${agent.agentId}/tests`, {
      name: 'Mentions pizza',
      turns: [{ visitor: 'What is on the menu?' }],
      expect: [{ type: 'contains', text: 'pizza' }],
    });
    await api.put(`/api/v1/agents/${agent.agentId}`, { draft_spec: spec(endpointId, { require_tests: true }) });
    const refused = await api.post(`/api/v1/agents/${agent.agentId}/publish`);
    expectError(refused, 409, 'tests_failed');
    expect(refused.body.error.details).toEqual([
      { path: `tests.${failing.body.data.id}`, message: 'Mentions pizza: contains: no reply says it' },
    ]);
    expect((await api.get(`/api/v1/agents/${agent.agentId}`)).body.data.version).toBe(1);
    await api.del(`/api/v1/agents/${agent.agentId}/tests/${failing.body.data.id}`);
    await api.post(`/api/v1/agents/${agent.agentId}/tests`, BOOKING);
    const published = await api.post(`/api/v1/agents/${agent.agentId}/publish`);
    expect(published.status).toBe(200);
    expect(published.body.data.version).toBe(2);

    // Right after a passing run of this very draft and these tests, a publish does not run them again...
    const spa = { name: 'Spa', turns: [{ visitor: 'Is the spa open?' }], expect: [{ type: 'contains', text: 'spa' }] };
    const added = await api.post(`/api/v1/agents/${agent.agentId}/tests`, spa);
    await api.put(`/api/v1/agents/${agent.agentId}`, {
      draft_spec: spec(endpointId, { require_tests: true, instructions: 'Book tables by the sea.' }),
    });
    expect((await api.post(`/api/v1/agents/${agent.agentId}/tests/run`, {})).body.data.status).toBe('passed');
    const asked = model.calls.length;
    expect((await api.post(`/api/v1/agents/${agent.agentId}/publish`)).body.data.version).toBe(3);
    expect(model.calls).toHaveLength(asked);
    // ...but a test changed since the run is run again, and fails the publish.
    await api.put(`/api/v1/agents/${agent.agentId}`, {
      draft_spec: spec(endpointId, { require_tests: true, instructions: 'Book tables by the harbour.' }),
    });
    expect((await api.post(`/api/v1/agents/${agent.agentId}/tests/run`, {})).body.data.status).toBe('passed');
    await api.put(`/api/v1/agents/${agent.agentId}/tests/${added.body.data.id}`, {
      ...spa,
      expect: [{ type: 'contains', text: 'sauna' }],
    });
    expectError(await api.post(`/api/v1/agents/${agent.agentId}/publish`), 409, 'tests_failed');
    expect(model.calls.length).toBeGreaterThan(asked);
  });

  it("tells a hooked agent's hook that a turn is a test's, and makes a test of a conversation", async () => {
    const { apiKey } = await service.newCustomer('Hooked');
    const api = client(service.url, apiKey);
    const agent = await deployAgent(
      service,
      api,
      { language: 'en-US' },
      { channel_config: { hook_url: customer.hookUrl } },
    );
    const { widget, conversationId } = await agent.visitor('guest-9');
    widget.send({ type: 'user_turn', client_turn_id: 'c-1', text: 'Where do I park?', mode: 'text' });
    await widget.next('reply');
    expect(customer.calls.at(-1)!.body.test).toBeUndefined();
    const made = await api.post(`/api/v1/agents/${agent.agentId}/tests`, { from_conversation_id: conversationId });
    expect(made.status).toBe(201);
    expect(made.body.data.turns).toEqual([{ visitor: 'Where do I park?' }]);
    const other = await createReadyAgent(api);
    expectError(
      await api.post(`/api/v1/agents/${other}/tests`, { from_conversation_id: conversationId }),
      404,
      'not_found',
    );
    const run = await api.post(`/api/v1/agents/${agent.agentId}/tests/run`, {});
    expect(run.body.data.results[0]).toMatchObject({
      passed: true,
      transcript: [
        { role: 'visitor', text: 'Where do I park?' },
        { role: 'agent', text: 'Hook says: Where do I park?' },
      ],
      verdicts: [],
    });
    expect(customer.calls.at(-1)!.body).toMatchObject({ test: true, text: 'Where do I park?' });

    // With no model anywhere (no evaluation, no model of its own, no MODEL_URL): the deterministic
    // expectations run, and the judge, the simulated visitor and the brief say what they need.
    const needs =
      "needs a model endpoint: set the agent's evaluation (endpoint_id and model), or let a model answer its turns";
    const judged = await api.put(`/api/v1/agents/${agent.agentId}/tests/${made.body.data.id}`, {
      name: 'Parking',
      turns: [{ visitor: 'Where do I park?' }],
      expect: [
        { type: 'contains', text: 'hook says' },
        { type: 'judge', criterion: 'The agent is helpful' },
      ],
    });
    expect(judged.status).toBe(200);
    await api.post(`/api/v1/agents/${agent.agentId}/tests`, {
      name: 'Simulated',
      simulation: { persona: 'A driver', goal: 'Find parking' },
    });
    const modelless = (await api.post(`/api/v1/agents/${agent.agentId}/tests/run`, {})).body.data;
    const results = Object.fromEntries(modelless.results.map((r: { name: string }) => [r.name, r]));
    expect(results.Parking).toMatchObject({
      passed: true,
      verdicts: [
        { passed: true, reason: 'a reply says it' },
        { passed: null, reason: `The judge ${needs}` },
      ],
    });
    expect(results.Simulated).toMatchObject({
      passed: false,
      error: `A simulated visitor ${needs}`,
      conversation_id: null,
    });
    expect((await api.get(`/api/v1/conversations/${conversationId}/brief`)).body.data).toMatchObject({
      summary: null,
      note: `A brief ${needs}`,
    });
    widget.close();
  });

  it('refuses tests that could not run, and patterns that could take too long', async () => {
    const { apiKey } = await service.newCustomer('Strict');
    const api = client(service.url, apiKey);
    const agentId = await createReadyAgent(api);
    const bad = await api.post(`/api/v1/agents/${agentId}/tests`, {
      name: 'Nested',
      turns: [{ visitor: 'hi' }],
      expect: [{ type: 'regex', text: '(a+)+$' }],
    });
    expectError(bad, 400, 'invalid_request');
    expect(bad.body.error.details[0].path).toBe('expect.0.text');
    expectError(
      await api.post(`/api/v1/agents/${agentId}/tests`, { name: 'Both', expect: [] }),
      400,
      'invalid_request',
    );
    await api.post(`/api/v1/agents/${agentId}/tests`, { name: 'Hi', turns: [{ visitor: 'hi' }] });
    expectError(await api.post(`/api/v1/agents/${agentId}/tests/run`, {}), 409, 'invalid_state');
  });

  it('analyses a conversation once it ends (a malformed answer asked again), tells it, and filters the history by it', async () => {
    const { api, agent } = await hotel();
    const before = state.analyses;
    const { widget, conversationId } = await agent.visitor('diner-1');
    widget.send({ type: 'user_turn', client_turn_id: 'c-1', text: 'Book a table for 4 please', mode: 'text' });
    await widget.next('reply');
    widget.send({ type: 'end' });
    await widget.next('conversation_ended');
    const analysed = await waitFor(async () => {
      const detail = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data;
      return detail.analysis ? detail : undefined;
    });
    expect(state.analyses - before).toBe(2);
    expect(analysed.analysis).toMatchObject({
      summary: 'The visitor booked a table for four.',
      fields: { party_size: 4, topic: 'dining' },
      criteria: { booked_table: { result: 'success', reason: 'The table was booked.' } },
      agent_version: 1,
    });
    // In the NDJSON export too.
    const exported = (await api.get(`/api/v1/conversations/export?user_sub=diner-1`)).body;
    // One line of NDJSON reads as one JSON object.
    const lines =
      typeof exported === 'string'
        ? exported
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [exported];
    expect(lines.map((line) => line.analysis)).toEqual([analysed.analysis]);
    const found = await api.get(`/api/v1/conversations?criterion=booked_table:success`);
    expect(found.body.data.map((c: { id: string }) => c.id)).toEqual([conversationId]);
    expect((await api.get(`/api/v1/conversations?field=party_size:5`)).body.data).toEqual([]);
    expectError(await api.get(`/api/v1/conversations?criterion=booked_table:maybe`), 400, 'invalid_request');
    const told = await waitFor(async () =>
      customer.transcript.find(
        (t) => t.body.type === 'conversation.analyzed' && t.body.conversation_id === conversationId,
      ),
    );
    expect(transcriptEventBodies['conversation.analyzed'].parse(told.body)).toEqual(told.body);
    expect(told.body.data).toEqual(analysed.analysis);
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const figures = await api.get(`/api/v1/analytics?agent_id=${agent.agentId}&from=${day(0)}&to=${day(1)}`);
    expect(figures.body.data.criteria).toEqual([
      {
        agent_id: agent.agentId,
        agent_version: 1,
        criterion: 'booked_table',
        success: 1,
        failure: 0,
        unknown: 0,
        success_rate: 1,
      },
    ]);
    // A brief for a person taking it over, written on demand; another customer's is not found.
    const brief = await api.get(`/api/v1/conversations/${conversationId}/brief`);
    expect(brief.status).toBe(200);
    expect(brief.body.data).toMatchObject({ summary: 'Brief: a guest wants a table.', note: null });
    const other = client(service.url, (await service.newCustomer('Other')).apiKey);
    expectError(await other.get(`/api/v1/conversations/${conversationId}/brief`), 404, 'not_found');
    // Once: no second analysis comes.
    await new Promise((r) => setTimeout(r, 300));
    expect(
      customer.transcript.filter(
        (t) => t.body.type === 'conversation.analyzed' && t.body.conversation_id === conversationId,
      ),
    ).toHaveLength(1);
    widget.close();
  });

  it("splits new conversations between versions by weight, each visitor keeping theirs, and answers each by its version's spec", async () => {
    const { api, agent, endpointId } = await hotel();
    await api.put(`/api/v1/agents/${agent.agentId}`, {
      draft_spec: spec(endpointId, { instructions: 'Version two.', greeting: 'Welcome to version two.' }),
    });
    await api.post(`/api/v1/agents/${agent.agentId}/publish`);
    const split = await api.put(`/api/v1/deployments/${agent.deploymentId}`, {
      versions: [
        { version: 1, weight: 1 },
        { version: 2, weight: 1 },
      ],
    });
    expect(split.status).toBe(200);
    expect(split.body.data.versions).toEqual([
      { version: 1, weight: 1 },
      { version: 2, weight: 1 },
    ]);
    expectError(
      await api.put(`/api/v1/deployments/${agent.deploymentId}`, {
        versions: [
          { version: 1, weight: 1 },
          { version: 9, weight: 1 },
        ],
      }),
      400,
      'invalid_request',
    );
    const versions = new Map<string, number>();
    for (let i = 0; i < 12; i++) {
      const { widget, conversationId } = await agent.visitor(`visitor-${i}`);
      const version = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data.agent_version;
      versions.set(`visitor-${i}`, version);
      // The widget is told the agent of the conversation's version.
      const ready = widget.frames.find((f) => f.type === 'ready');
      expect(ready.agent.greeting).toBe(version === 2 ? 'Welcome to version two.' : null);
      widget.close();
    }
    expect(new Set(versions.values())).toEqual(new Set([1, 2]));
    const again = await agent.visitor('visitor-3', undefined);
    {
      const detail = (await api.get(`/api/v1/conversations/${again.conversationId}`)).body.data;
      expect(detail.agent_version).toBe(versions.get('visitor-3'));
    }
    // A version-1 conversation's model is told version 1's instructions.
    const first = [...versions].find(([, v]) => v === 1)![0];
    const { widget, conversationId } = await agent.visitor(first);
    widget.send({ type: 'user_turn', client_turn_id: 'c-1', text: 'Is the spa open?', mode: 'text' });
    await widget.next('reply');
    const system = model.calls.at(-1)!.body.messages[0]!.content!;
    expect(system).toContain('Book tables at the Harbor Hotel.');
    expect(system).not.toContain('Version two.');
    expect((await api.get(`/api/v1/conversations/${conversationId}`)).body.data.agent_version).toBe(1);
    widget.close();
    again.widget.close();

    // Test runs compare the versions: each answered by its own spec, a version it lacks refused.
    await api.post(`/api/v1/agents/${agent.agentId}/tests`, {
      name: 'Spa',
      turns: [{ visitor: 'Is the spa open?' }],
      expect: [{ type: 'contains', text: 'spa' }],
    });
    for (const version of [1, 2]) {
      const run = (await api.post(`/api/v1/agents/${agent.agentId}/tests/run`, { version })).body.data;
      expect(run).toMatchObject({ version, status: 'passed' });
      const told = model.calls.at(-1)!.body.messages[0]!.content!;
      expect(told.includes('Version two.')).toBe(version === 2);
    }
    const missing = await api.post(`/api/v1/agents/${agent.agentId}/tests/run`, { version: 9 });
    expectError(missing, 400, 'invalid_request');
    expect(missing.body.error.details).toEqual([{ path: 'version', message: 'no such published version' }]);
  });

  /** A hooked agent on `on` whose analysis asks the model at `baseUrl`: a customer of its own. */
  const analysedAgent = async (on: TestService, name: string, baseUrl: string) => {
    const { apiKey } = await on.newCustomer(name);
    const api = client(on.url, apiKey);
    const endpoint = await api.post('/api/v1/model-endpoints', { name: 'Analyst', base_url: baseUrl });
    const agent = await deployAgent(
      on,
      api,
      {
        evaluation: { endpoint_id: endpoint.body.data.id, model: 'analyst' },
        analysis: { criteria: [{ id: 'answered', description: 'The question was answered' }] },
      },
      { channel_config: { hook_url: customer.hookUrl } },
    );
    return { api, agent };
  };

  /** One turn answered, then the visitor ends it: its conversation's id. */
  const endedConversation = async (agent: Awaited<ReturnType<typeof deployAgent>>, sub: string) => {
    const { widget, conversationId } = await agent.visitor(sub);
    widget.send({ type: 'user_turn', client_turn_id: 'c-1', text: 'Late checkout?', mode: 'text' });
    await widget.next('reply');
    widget.send({ type: 'end' });
    await widget.next('conversation_ended');
    widget.close();
    return conversationId;
  };

  it('leaves an analysis whose model never answers queued for another attempt, saying why', async () => {
    // A short lease: its model gets half of it.
    const quick = await startService(kind, { analysis: { leaseMs: 1_000 } });
    const silent = await startModelServer(() => {});
    try {
      const { api, agent } = await analysedAgent(quick, 'Slow models', silent.baseUrl);
      const conversationId = await endedConversation(agent, 'guest-1');
      const row = await waitFor(async () => {
        const found = await quick.app.store.db
          .selectFrom('conversation_analyses')
          .selectAll()
          .where('conversation_id', '=', conversationId)
          .executeTakeFirst();
        return found?.error ? found : undefined;
      });
      expect(row).toMatchObject({ status: 'queued', attempts: 1, analysis: null });
      expect(row.error).toMatch(/^the model endpoint gave no answer: timed out after 500 ms/);
      // Tried again a minute later, not at once.
      expect(Date.parse(row.due_at) - Date.now()).toBeGreaterThan(50_000);
      expect((await api.get(`/api/v1/conversations/${conversationId}`)).body.data.analysis).toBeNull();
    } finally {
      await quick.close();
      await silent.close();
    }
  });

  it("lets no customer's slow model hold up another customer's analyses", async () => {
    const silent = await startModelServer(() => {});
    const answering = await startModelServer((call, res) =>
      complete(
        res,
        call.body.model,
        JSON.stringify({
          summary: 'A guest asked about checkout.',
          fields: {},
          criteria: { answered: { result: 'success', reason: 'Answered.' } },
        }),
      ),
    );
    try {
      // Four of one customer's conversations wait on a model that never answers (for 30 s)...
      const slow = await analysedAgent(service, 'Slow model', silent.baseUrl);
      for (let i = 0; i < 4; i++) await endedConversation(slow.agent, `slow-${i}`);
      await waitFor(async () => silent.calls.length >= 2);
      // ...and another customer's conversation, ended after them, is analysed meanwhile.
      const quick = await analysedAgent(service, 'Quick model', answering.baseUrl);
      const conversationId = await endedConversation(quick.agent, 'quick-1');
      const detail = await waitFor(async () => {
        const found = (await quick.api.get(`/api/v1/conversations/${conversationId}`)).body.data;
        return found.analysis && found;
      });
      expect(detail.analysis.criteria).toEqual({ answered: { result: 'success', reason: 'Answered.' } });
      // Half the places at most went to the slow customer.
      expect(silent.calls).toHaveLength(2);
    } finally {
      await silent.close();
      await answering.close();
    }
  });

  it('analyses a conversation left quiet, and queues nothing for an agent that asks for no analysis', async () => {
    const quiet = await startService(kind, { analysis: { quietMs: 400 } });
    const answering = await startModelServer((call, res) =>
      complete(
        res,
        call.body.model,
        JSON.stringify({
          summary: 'A guest asked about checkout and left.',
          fields: {},
          criteria: { answered: { result: 'success', reason: 'Answered.' } },
        }),
      ),
    );
    try {
      const { api, agent } = await analysedAgent(quiet, 'Quiet guests', answering.baseUrl);
      const { widget, conversationId } = await agent.visitor('quiet-1');
      widget.send({ type: 'user_turn', client_turn_id: 'c-1', text: 'Late checkout?', mode: 'text' });
      await widget.next('reply');
      widget.close();
      const detail = await waitFor(async () => {
        const found = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data;
        return found.analysis && found;
      });
      expect(detail).toMatchObject({ status: 'open', analysis: { summary: 'A guest asked about checkout and left.' } });
      expect(answering.calls).toHaveLength(1);

      // An agent without an analysis: its ended and its quiet conversations are never queued.
      const { apiKey } = await quiet.newCustomer('No analysis');
      const plain = await deployAgent(
        quiet,
        client(quiet.url, apiKey),
        { language: 'en-US' },
        {
          channel_config: { hook_url: customer.hookUrl },
        },
      );
      const ended = await endedConversation(plain, 'plain-1');
      const left = await plain.visitor('plain-2');
      left.widget.send({ type: 'user_turn', client_turn_id: 'c-1', text: 'Parking?', mode: 'text' });
      await left.widget.next('reply');
      left.widget.close();
      await new Promise((r) => setTimeout(r, 1_000));
      const queued = await quiet.app.store.db
        .selectFrom('conversation_analyses')
        .select('conversation_id')
        .where('conversation_id', 'in', [ended, left.conversationId])
        .execute();
      expect(queued).toEqual([]);
    } finally {
      await quiet.close();
      await answering.close();
    }
  });
});
