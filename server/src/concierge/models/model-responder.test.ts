import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  client,
  type Client,
  createReadyAgent,
  describeEachStore,
  expectError,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../../test/harness.js';
import { deployAgent, sign, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import {
  type ModelBehaviour,
  send,
  startModelServer,
  streamOf,
  toolCallStream,
  writes,
} from '../../../test/model-server.js';

type ModelServer = Awaited<ReturnType<typeof startModelServer>>;

const KEY = 'sk-test-model-key-9876';

describeEachStore('agents that answer with a model', (kind: StoreKind) => {
  let service: TestService;
  let model: ModelServer;

  beforeAll(async () => {
    model = await startModelServer();
    service = await startService(kind);
  });
  afterAll(async () => {
    await service?.close();
    await model?.close();
  });

  /** A customer whose published agent answers with `responder` (on a new endpoint of the model server), live without a hook. */
  const live = async (responder: Record<string, unknown> = {}) => {
    const { apiKey } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const endpoint = await api.post('/api/v1/model-endpoints', { name: 'Test', base_url: model.baseUrl, api_key: KEY });
    expect(endpoint.status).toBe(201);
    const agent = await deployAgent(service, api, {
      language: 'en-US',
      instructions: 'Answer questions about the Harbor Hotel.',
      responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: 'test-model', ...responder },
    });
    const { widget, conversationId } = await agent.visitor('guest-1', { name: 'Ada', ctx: { room: '12' } });
    return { api, widget, conversationId };
  };

  const ask = (widget: Widget, text: string, mode: 'text' | 'voice' = 'text') =>
    widget.send({ type: 'user_turn', client_turn_id: `c-${Math.random()}`, text, mode });

  const deliveriesOf = async (api: Client, conversationId: string) =>
    (await api.get(`/api/v1/deliveries?conversation_id=${conversationId}&kind=model`)).body.data;

  it('streams the reply in parts at sentence ends, resolves it with the whole text, and records the call without its key', async () => {
    model.state.behaviour = writes('Breakfast is served from 7 to 10. Enjoy your stay, Ada!', 5);
    const { api, widget, conversationId } = await live();
    ask(widget, 'When is breakfast?');
    const accepted = await widget.next('turn_accepted');
    expect((await widget.next('turn_acknowledged')).turn_id).toBe(accepted.turn_id);
    const first = await widget.next('reply_part');
    expect(first).toMatchObject({ turn_id: accepted.turn_id, part: 0, text: 'Breakfast is served from 7 to 10. ' });
    const reply = await widget.next('reply');
    expect(reply).toMatchObject({
      turn_id: accepted.turn_id,
      text: 'Breakfast is served from 7 to 10. Enjoy your stay, Ada!',
      actions: [],
    });
    expect(widget.frames.filter((f) => f.type === 'reply_part').map((f) => f.text)).toEqual([
      'Breakfast is served from 7 to 10. ',
    ]);

    const call = model.calls.at(-1)!;
    expect(call.authorization).toBe(`Bearer ${KEY}`);
    expect(call.body).toMatchObject({ model: 'test-model', stream: true, max_tokens: 400 });
    const system = call.body.messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toContain('Answer questions about the Harbor Hotel.');
    expect(system.content).toContain('Answer in American English (en-US).');
    expect(system.content).toContain('The visitor\'s name: "Ada".');
    expect(system.content).toContain('{"room":"12"}');
    expect(call.body.messages.at(-1)).toEqual({ role: 'user', content: 'When is breakfast?' });

    const [record] = await deliveriesOf(api, conversationId);
    expect(record).toMatchObject({
      kind: 'model',
      event_type: 'model.call',
      url: `${model.baseUrl}/chat/completions`,
      outcome: 'succeeded',
      error: null,
      response: { status: 200, body: 'Breakfast is served from 7 to 10. Enjoy your stay, Ada!' },
      model_usage: { tokens_in: 120, tokens_out: 17 },
    });
    expect(record.model_usage.first_token_ms).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(record)).not.toContain(KEY);
    expect(service.logs.join('\n')).not.toContain(KEY);
    const detail = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data;
    expect(detail.turns[0]).toMatchObject({ status: 'resolved', reply_text: reply.text });
  });

  it('tells the model the conversation so far, a reply as the visitor heard it', async () => {
    model.state.behaviour = writes('The spa opens at 9. It has a pool and a sauna.');
    const { api, widget, conversationId } = await live();
    // Asked aloud: the reply is spoken, and how far it was heard is reported.
    ask(widget, 'When does the spa open?', 'voice');
    const first = await widget.next('reply');
    widget.send({ type: 'playback', turn_id: first.turn_id, sentence: 0, state: 'interrupted', offset_ms: 700 });
    await waitFor(async () => {
      const detail = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data;
      return detail.turns[0].heard?.interrupted === true;
    });
    model.state.behaviour = writes('Yes, towels are at the spa.');
    ask(widget, 'Are there towels?');
    await widget.next('reply');
    const messages = model.calls.at(-1)!.body.messages.slice(1);
    expect(messages).toEqual([
      { role: 'user', content: 'When does the spa open?' },
      { role: 'assistant', content: expect.stringMatching(/^The spa\b.* \[the visitor interrupted here\]$/) },
      { role: 'user', content: 'Are there towels?' },
    ]);
    expect(messages[1]!.content).not.toContain('sauna');
  });

  it('tries the fallback model when the first says nothing in time, and fails the turn model_failed when neither answers', async () => {
    model.state.behaviour = (call, res) => {
      if (call.body.model === 'slow-model') return void res.writeHead(200, { 'content-type': 'text/event-stream' });
      send(res, streamOf(call.body.model, 'From the fallback.'));
    };
    const saved = await live({ model: 'slow-model', fallback_model: 'quick-model', first_token_timeout_ms: 500 });
    ask(saved.widget, 'Hello?');
    expect((await saved.widget.next('reply')).text).toBe('From the fallback.');
    const records = await deliveriesOf(saved.api, saved.conversationId);
    expect(records.map((r: any) => [r.attempt, JSON.parse(r.request.body).model, r.outcome, r.error])).toEqual(
      expect.arrayContaining([
        [1, 'slow-model', 'failed', 'timeout'],
        [2, 'quick-model', 'succeeded', null],
      ]),
    );

    model.state.behaviour = (_call, res) =>
      void res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' })
        .end('{"error":{"message":"Rate limit reached"}}');
    const limited = await live();
    ask(limited.widget, 'Hello?');
    expect(await limited.widget.next('turn_failed')).toMatchObject({ reason: 'model_failed' });
    const [refused] = await deliveriesOf(limited.api, limited.conversationId);
    expect(refused).toMatchObject({
      outcome: 'failed',
      // Its Retry-After kept in the record, as the README says.
      response: { status: 429, headers: { 'retry-after': '7' } },
      error_detail: 'the model endpoint answered 429: Rate limit reached',
    });
  });

  it.each([
    [
      'an HTML page',
      (res: any) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Sign in</html>'),
      'not a stream of events',
    ],
    ['an event that is not JSON', (res: any) => send(res, ['data: {"choices": [\n\n']), 'not JSON'],
    ['a stream with no [DONE]', (res: any) => send(res, ['data: {"choices":[]}\n\n']), 'no [DONE]'],
  ])('fails the turn on %s, saying why in the record', async (_what, behaviour, why) => {
    model.state.behaviour = (_call, res) => behaviour(res);
    const { api, widget, conversationId } = await live();
    ask(widget, 'Hello?');
    expect(await widget.next('turn_failed')).toMatchObject({ reason: 'model_failed' });
    const [record] = await deliveriesOf(api, conversationId);
    expect(record.outcome).toBe('failed');
    expect(record.error_detail).toContain(why);
  });

  it('resolves a stream cut midway with what was said', async () => {
    model.state.behaviour = (call, res) =>
      send(res, streamOf(call.body.model, 'The pool is open. Until ten', { done: false }), 2, false);
    const { widget } = await live();
    ask(widget, 'Pool?');
    expect((await widget.next('reply')).text).toBe('The pool is open. Until ten');
  });

  it('refuses to publish a responder it could not run, naming the field', async () => {
    const { apiKey } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const agentId = await createReadyAgent(api);
    for (const [responder, path] of [
      [{ type: 'model', model: 'm', temperature: 3 }, 'draft_spec.responder.temperature'],
      [{ type: 'model' }, 'draft_spec.responder.model'],
      [
        { type: 'model', model: 'm', endpoint_id: '00000000-0000-4000-8000-000000000000' },
        'draft_spec.responder.endpoint_id',
      ],
    ] as const) {
      await api.put(`/api/v1/agents/${agentId}`, { draft_spec: { responder } });
      const refused = await api.post(`/api/v1/agents/${agentId}/publish`);
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error.details.map((d: any) => d.path)).toContain(path);
    }
  });
});

describeEachStore("a model agent's tools", (kind: StoreKind) => {
  let service: TestService;
  let model: ModelServer;
  let tools: Awaited<ReturnType<typeof startCustomerServer>>;

  beforeAll(async () => {
    model = await startModelServer();
    tools = await startCustomerServer();
    service = await startService(kind, { env: { HOOK_ALLOWED_HOSTS: '*@127.0.0.1' } });
  });
  afterAll(async () => {
    await service?.close();
    await model?.close();
    await tools?.close();
  });

  const roomTool = (over: Record<string, unknown> = {}) => ({
    name: 'check_room',
    description: 'Whether a room is free on a night',
    parameters: {
      type: 'object',
      properties: { night: { type: 'string' }, guests: { type: 'integer', minimum: 1 } },
      required: ['night', 'guests'],
      additionalProperties: false,
    },
    url: tools.hookUrl,
    ...over,
  });

  /** A model that calls `calls` first, then answers with what the tools said. */
  const callsThenAnswers =
    (calls: { name: string; arguments: unknown }[]): ModelBehaviour =>
    (call, res) => {
      const results = call.body.messages.filter((m) => m.role === 'tool');
      if (!results.length) return send(res, toolCallStream(call.body.model, calls));
      send(res, streamOf(call.body.model, `Tools said: ${results.map((r) => r.content).join(' | ')}`));
    };

  const liveWith = async (responder: Record<string, unknown>) => {
    const { apiKey } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const endpoint = await api.post('/api/v1/model-endpoints', { name: 'Test', base_url: model.baseUrl });
    const agent = await deployAgent(service, api, {
      responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: 'm', ...responder },
    });
    const { widget, conversationId } = await agent.visitor();
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Is a room free on Friday?', mode: 'text' });
    return { api, widget, secret: agent.secret, conversationId };
  };

  it("POSTs the model's call to the tool, signed, and gives the model its JSON answer; the call is a delivery of kind tool", async () => {
    tools.state.behaviour = (_call, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"free":true,"price":120}');
    model.state.behaviour = callsThenAnswers([{ name: 'check_room', arguments: { night: '2026-11-27', guests: 2 } }]);
    const before = tools.calls.length;
    const { api, widget, secret, conversationId } = await liveWith({ tools: [roomTool()] });
    const reply = await widget.next('reply');
    expect(reply.text).toBe('Tools said: {"free":true,"price":120}');
    const call = tools.calls[before]!;
    expect(call.body).toMatchObject({
      type: 'tool.call',
      conversation_id: conversationId,
      tool: 'check_room',
      arguments: { night: '2026-11-27', guests: 2 },
    });
    expect(call.headers['x-service-signature']).toBe(sign(secret, call.raw));
    expect(call.headers['webhook-id']).toBe(call.body.call_id);
    expect(call.headers['webhook-signature']).toMatch(/^v1,/);
    const offered = model.calls.at(-2)!.body.tools!.map((t) => t.function.name);
    expect(offered).toEqual(['check_room', 'hand_off_to_person', 'end_conversation']);
    const records = (await api.get(`/api/v1/deliveries?conversation_id=${conversationId}`)).body.data;
    expect(records.map((r: any) => r.kind).sort()).toEqual(['model', 'model', 'tool']);
    expect(records.find((r: any) => r.kind === 'tool')).toMatchObject({
      event_type: 'tool.call',
      outcome: 'succeeded',
    });
  });

  it("gives arguments that do not match the tool's schema back to the model as an error, never to the tool", async () => {
    model.state.behaviour = callsThenAnswers([{ name: 'check_room', arguments: { night: 'Friday', guests: 0 } }]);
    const before = tools.calls.length;
    const { widget } = await liveWith({ tools: [roomTool()] });
    const reply = await widget.next('reply');
    expect(reply.text).toContain("the arguments do not match the tool's parameters");
    expect(reply.text).toContain('guests');
    expect(tools.calls.length).toBe(before);
  });

  it('says the filler while a tool takes more than 1.5 s', async () => {
    tools.state.behaviour = (_call, res) =>
      void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"free":false}'), 1_900);
    model.state.behaviour = callsThenAnswers([{ name: 'check_room', arguments: { night: '2026-11-27', guests: 1 } }]);
    const { widget } = await liveWith({ tools: [roomTool({ filler: 'Let me look at the bookings.' })] });
    const part = await widget.next('reply_part', 4_000);
    expect(part.text).toBe('Let me look at the bookings. ');
    const reply = await widget.next('reply', 6_000);
    expect(reply.text).toBe('Let me look at the bookings. Tools said: {"free":false}');
  });

  it("runs the page's tools as client actions, and the built-ins hand off and end the conversation", async () => {
    model.state.behaviour = callsThenAnswers([
      { name: 'open_booking', arguments: { night: '2026-11-27' } },
      { name: 'hand_off_to_person', arguments: { reason: 'wants a discount' } },
      { name: 'end_conversation', arguments: {} },
    ]);
    const { api, widget, conversationId } = await liveWith({
      client_tools: [
        {
          name: 'open_booking',
          description: 'Opens the booking form',
          parameters: { type: 'object', properties: { night: { type: 'string' } } },
        },
      ],
    });
    const reply = await widget.next('reply');
    expect(reply.actions).toEqual([{ type: 'client', name: 'open_booking', args: { night: '2026-11-27' } }]);
    expect(await widget.next('conversation_ended')).toMatchObject({ reason: 'agent_ended' });
    const detail = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data;
    expect(detail).toMatchObject({
      status: 'ended',
      end_reason: 'agent_ended',
      needs_person: true,
      handoff_reason: 'wants a discount',
    });
  });

  it('offers no tools after five rounds: the model must answer', async () => {
    tools.state.behaviour = (_call, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    model.state.behaviour = (call, res) =>
      call.body.tools
        ? send(res, toolCallStream(call.body.model, [{ name: 'check_room', arguments: { night: 'n', guests: 1 } }]))
        : send(res, streamOf(call.body.model, 'I checked five times.'));
    const { widget } = await liveWith({ tools: [roomTool()] });
    expect((await widget.next('reply', 8_000)).text).toBe('I checked five times.');
    const last = model.calls.slice(-6);
    expect(last.map((c) => Boolean(c.body.tools))).toEqual([true, true, true, true, true, false]);
  });

  it('refuses tools it could not run on publish, naming the field', async () => {
    const { apiKey } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const agentId = await createReadyAgent(api);
    for (const [tool, path] of [
      [roomTool({ name: 'hand_off_to_person' }), 'draft_spec.responder.tools.0.name'],
      [
        roomTool({ parameters: { type: 'object', properties: { a: { type: 'string', pattern: '(a+)+$' } } } }),
        'draft_spec.responder.tools.0.parameters',
      ],
      [
        roomTool({ parameters: { type: 'object', properties: { a: { type: 'nonsense' } } } }),
        'draft_spec.responder.tools.0.parameters',
      ],
      [roomTool({ url: 'ftp://tools.example' }), 'draft_spec.responder.tools.0.url'],
      [roomTool({ timeout_ms: 60_000 }), 'draft_spec.responder.tools.0.timeout_ms'],
    ] as const) {
      await api.put(`/api/v1/agents/${agentId}`, {
        draft_spec: { responder: { type: 'model', model: 'm', tools: [tool] } },
      });
      const refused = await api.post(`/api/v1/agents/${agentId}/publish`);
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error.details.map((d: any) => d.path)).toContain(path);
    }
    // A call names its tool: two of one name could not be told apart.
    await api.put(`/api/v1/agents/${agentId}`, {
      draft_spec: {
        responder: {
          type: 'model',
          model: 'm',
          tools: [roomTool()],
          client_tools: [{ name: roomTool().name, description: 'Shows the room', parameters: { type: 'object' } }],
        },
      },
    });
    const twice = await api.post(`/api/v1/agents/${agentId}/publish`);
    expectError(twice, 400, 'invalid_request');
    expect(twice.body.error.details).toContainEqual({
      path: 'draft_spec.responder.tools',
      message: 'each tool needs a name of its own, among tools and client_tools',
    });
  });
});

describeEachStore('model endpoints', (kind: StoreKind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(async () => service?.close());

  it('keep the key write-only and sealed, per customer; refuse deletion while an agent names them', async () => {
    const { apiKey } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const created = await api.post('/api/v1/model-endpoints', {
      name: 'OpenAI',
      base_url: 'https://api.openai.com/v1/',
      api_key: KEY,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: expect.any(String),
      name: 'OpenAI',
      base_url: 'https://api.openai.com/v1',
      api_key_last4: '9876',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const id = created.body.data.id;
    const row = await service.app.store.db
      .selectFrom('model_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.api_key_sealed).toMatch(/^v1\./);
    expect(row.api_key_sealed).not.toContain(KEY);
    expect(JSON.stringify((await api.get('/api/v1/model-endpoints')).body)).not.toContain(KEY);

    const other = client(service.url, (await service.newCustomer('Other')).apiKey);
    expectError(await other.get(`/api/v1/model-endpoints/${id}`), 404, 'not_found');
    expectError(await other.put(`/api/v1/model-endpoints/${id}`, { name: 'x' }), 404, 'not_found');
    expectError(await other.del(`/api/v1/model-endpoints/${id}`), 404, 'not_found');

    const cleared = await api.put(`/api/v1/model-endpoints/${id}`, { api_key: null });
    expect(cleared.body.data.api_key_last4).toBeNull();
    expectError(await api.post('/api/v1/model-endpoints', { name: 'x', base_url: 'ftp://x' }), 400, 'invalid_request');
    expectError(
      await api.post('/api/v1/model-endpoints', { name: 'x', base_url: 'https://u:p@x.example/v1' }),
      400,
      'invalid_request',
    );

    const agentId = await createReadyAgent(api);
    await api.put(`/api/v1/agents/${agentId}`, {
      draft_spec: { responder: { type: 'model', model: 'm', endpoint_id: id } },
    });
    const refused = await api.del(`/api/v1/model-endpoints/${id}`);
    expectError(refused, 409, 'invalid_state');
    expect(refused.body.error.message).toContain("'Front desk'");
    await api.put(`/api/v1/agents/${agentId}`, { draft_spec: {} });
    expect((await api.del(`/api/v1/model-endpoints/${id}`)).status).toBe(200);
  });
});

describe('testing a model endpoint', () => {
  it('asks one question and says what came back, or why nothing did; nothing is stored', async () => {
    const model = await startModelServer(writes('Hello there.'));
    const service = await startService('sqlite');
    try {
      const api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
      const endpoint = await api.post('/api/v1/model-endpoints', { name: 'T', base_url: model.baseUrl, api_key: KEY });
      const tested = await api.post(`/api/v1/model-endpoints/${endpoint.body.data.id}/test`, { model: 'm1' });
      expect(tested.body.data).toMatchObject({ ok: true, answer: 'Hello there.', status: 200, error: null });
      expect(model.calls.at(-1)).toMatchObject({ authorization: `Bearer ${KEY}`, body: { model: 'm1' } });
      model.state.behaviour = (_call, res) =>
        void res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"error":{"message":"Incorrect API key"}}');
      const refused = await api.post(`/api/v1/model-endpoints/${endpoint.body.data.id}/test`, { model: 'm1' });
      expect(refused.body.data).toMatchObject({
        ok: false,
        status: 401,
        error: 'the model endpoint answered 401: Incorrect API key',
      });
      expect((await api.get('/api/v1/deliveries')).body.meta.total_count).toBe(0);
    } finally {
      await service.close();
      await model.close();
    }
  });
});

describe('MODEL_CONCURRENCY', () => {
  it("makes a customer's turn past its calls in flight wait for a place, and fail model_failed when none comes in time", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const model = await startModelServer((call, res) => {
      const text = call.body.messages.at(-1)!.content!;
      if (text === 'first') {
        // Its first words at once (so it is not cut off), the rest held: it keeps its place.
        const events = streamOf(call.body.model, 'First answered.');
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(events.slice(0, 2).join(''));
        return void held.then(() => res.end(events.slice(2).join('')));
      }
      send(res, streamOf(call.body.model, `Answered: ${text}.`));
    });
    const service = await startService('sqlite', { env: { MODEL_CONCURRENCY: '1' } });
    try {
      const api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
      const endpoint = await api.post('/api/v1/model-endpoints', { name: 'T', base_url: model.baseUrl });
      const agent = await deployAgent(service, api, {
        responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: 'm', first_token_timeout_ms: 1_000 },
      });
      const visitor = async (sub: string) => (await agent.visitor(sub)).widget;
      const [a, b, c] = [await visitor('a'), await visitor('b'), await visitor('c')];
      a.send({ type: 'user_turn', client_turn_id: 'a1', text: 'first', mode: 'text' });
      await waitFor(async () => model.calls.length === 1);
      // Past its first-token timeout with no place: the turn fails, the service still serves.
      b.send({ type: 'user_turn', client_turn_id: 'b1', text: 'second', mode: 'text' });
      expect(await b.next('turn_failed', 5_000)).toMatchObject({ reason: 'model_failed' });
      expect(service.logs.some((l) => l.includes('MODEL_CONCURRENCY'))).toBe(true);
      // A turn that gets the place when it is released is answered.
      c.send({ type: 'user_turn', client_turn_id: 'c1', text: 'third', mode: 'text' });
      await new Promise((r) => setTimeout(r, 200));
      expect(model.calls).toHaveLength(1);
      release();
      expect((await a.next('reply')).text).toBe('First answered.');
      expect((await c.next('reply')).text).toBe('Answered: third.');
    } finally {
      release();
      await service.close();
      await model.close();
    }
  });
});

describe('a model agent on a service with no model', () => {
  it('fails its turns model_failed, saying which setting is missing', async () => {
    const service = await startService('sqlite');
    try {
      const { apiKey } = await service.newCustomer('Hotel');
      const api = client(service.url, apiKey);
      const agent = await deployAgent(service, api, { responder: { type: 'model', model: 'm' } });
      const { widget } = await agent.visitor();
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
      expect(await widget.next('turn_failed')).toMatchObject({ reason: 'model_failed' });
      await waitFor(async () => service.logs.some((l) => l.includes('no MODEL_URL')));
    } finally {
      await service.close();
    }
  });
});

describe("the README's agent without a server", () => {
  const readme = readFileSync(join(import.meta.dirname, '../../../../README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## An agent without a server'),
    readme.indexOf('## Writing your customer server'),
  );

  it('OpenAI, Ollama and llama.cpp as its table sets them up: their path and model, against a server that speaks the protocol', async () => {
    const rows = [
      ...section.matchAll(/^\s*\| ([^|]+?)\s+\| `(https?:\/\/[^`]+)`\s+\| `([^`]+)`[^|]*\| ([^|]+?)\s+\|$/gm),
    ].map((m) => ({ name: m[1]!, base: new URL(m[2]!), model: m[3]!, also: m[4]! }));
    expect(rows.map((r) => [r.name, r.base.href, r.model, r.also])).toEqual([
      ['OpenAI', 'https://api.openai.com/v1', 'gpt-4o-mini', 'nothing'],
      [
        'Ollama (`ollama serve`)',
        'http://127.0.0.1:11434/v1',
        'llama3.2',
        '`HOOK_ALLOWED_HOSTS=models@127.0.0.1:11434`',
      ],
      ["llama.cpp's `llama-server`", 'http://127.0.0.1:8080/v1', 'local', '`HOOK_ALLOWED_HOSTS=models@127.0.0.1:8080`'],
    ]);
    const model = await startModelServer(writes('Hello from the model.'));
    const service = await startService('sqlite');
    try {
      for (const row of rows) {
        const { apiKey } = await service.newCustomer('Hotel');
        const api = client(service.url, apiKey);
        // The same path, on the port this test's server has.
        const base = new URL(row.base.pathname, model.baseUrl).toString().replace(/\/$/, '');
        const endpoint = await api.post('/api/v1/model-endpoints', {
          name: row.name,
          base_url: base,
          api_key: 'k-1234',
        });
        const agent = await deployAgent(service, api, {
          responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: row.model },
        });
        const { widget } = await agent.visitor();
        widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
        expect((await widget.next('reply')).text).toBe('Hello from the model.');
        expect(model.calls.at(-1)!.body.model).toBe(row.model);
        widget.close();
      }
    } finally {
      await service.close();
      await model.close();
    }
  });

  it('its example spec publishes, and its tool is called as the README shows', async () => {
    const example = JSON.parse(/```json\n(\s*\{\s*"greeting"[\s\S]+?)```/.exec(section)![1]!);
    const tools = await startCustomerServer((_call, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"free":true}'),
    );
    const model = await startModelServer((call, res) => {
      const result = call.body.messages.find((m) => m.role === 'tool');
      if (!result)
        return send(res, toolCallStream(call.body.model, [{ name: 'check_room', arguments: { night: '2026-12-24' } }]));
      send(res, streamOf(call.body.model, `Yes: ${result.content}`));
    });
    const service = await startService('sqlite', { env: { HOOK_ALLOWED_HOSTS: '*@127.0.0.1' } });
    try {
      const { apiKey } = await service.newCustomer('Hotel');
      const api = client(service.url, apiKey);
      const endpoint = await api.post('/api/v1/model-endpoints', { name: 'Test', base_url: model.baseUrl });
      example.responder.endpoint_id = endpoint.body.data.id;
      example.responder.tools[0].url = tools.hookUrl;
      const { widget } = await (await deployAgent(service, api, example)).visitor();
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Is a room free on Christmas Eve?', mode: 'text' });
      expect((await widget.next('reply')).text).toBe('Yes: {"free":true}');
      expect(tools.calls.at(-1)!.body).toMatchObject({
        type: 'tool.call',
        tool: 'check_room',
        arguments: { night: '2026-12-24' },
      });
      expect(model.calls[0]!.body.messages[0]!.content).toContain(
        'Breakfast is served from 7 to 10 in the garden room.',
      );
    } finally {
      await service.close();
      await model.close();
      await tools.close();
    }
  });
});
