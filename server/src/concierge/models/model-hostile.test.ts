import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  client,
  createReadyAgent,
  describeEachStore,
  expectError,
  HEALTHY_LOOP_MS,
  healthWhile,
  startService,
  type StoreKind,
  type TestService,
} from '../../../test/harness.js';
import { deployAgent, serviceWithModel, startCustomerServer } from '../../../test/concierge-kit.js';
import {
  type ModelBehaviour,
  type ModelServer,
  send,
  startModelServer,
  streamOf,
  toolCallStream,
} from '../../../test/model-server.js';
import { parseAllowedHosts } from '../../shared/egress.js';
import { STREAM_BOUNDS, streamChat } from './chat-completions.js';

/** A `chat.completion.chunk` carrying `delta`, as a server-sent event. */
const event = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The whole answer written at once, as one buffer: the service reads every event of it in one go. */
const all =
  (events: string[]): ModelBehaviour =>
  (_call, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(events.join(''));
  };

describeEachStore('what a model streams, and the tools it calls, are bounded whatever it sends', (kind: StoreKind) => {
  let service: TestService;
  let model: ModelServer;
  let tools: Awaited<ReturnType<typeof startCustomerServer>>;

  beforeAll(async () => {
    model = await startModelServer();
    tools = await startCustomerServer((_call, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"free":true}'),
    );
    service = await startService(kind);
  });
  afterAll(async () => {
    await service?.close();
    await model?.close();
    await tools?.close();
  });

  const tool = (name = 'check_room', parameters: Record<string, unknown> = { type: 'object', properties: {} }) => ({
    name,
    description: 'Whether a room is free',
    parameters,
    url: tools.hookUrl,
  });

  /** A customer whose agent answers with the model server, and a visitor ready: `turn()` asks and gives the reply or failure. */
  const visit = async (responder: Record<string, unknown> = {}, runtime: Record<string, unknown> = {}) => {
    const { apiKey } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const endpoint = await api.post('/api/v1/model-endpoints', { name: 'Test', base_url: model.baseUrl });
    const agent = await deployAgent(
      service,
      api,
      { responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: 'm', ...responder } },
      { runtime_config: runtime },
    );
    const { widget, conversationId } = await agent.visitor();
    const turn = () => {
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Is a room free?', mode: 'text' });
      return widget.nextOf(['reply', 'turn_failed'], 30_000);
    };
    return { api, widget, conversationId, turn };
  };

  /** As {@link visit}, the turn asked at once. */
  const ask = async (responder: Record<string, unknown> = {}, runtime: Record<string, unknown> = {}) => {
    const visited = await visit(responder, runtime);
    return { ...visited, answered: visited.turn() };
  };

  it('drops tool calls at an index past five (index 200,000,000 held the node 11 s), and runs the rest', async () => {
    const before = tools.calls.length;
    model.state.behaviour = (call, res, req) =>
      call.body.messages.some((m) => m.role === 'tool')
        ? send(res, streamOf('m', 'Room 12 is free.'))
        : all([
            event({ tool_calls: [{ index: 200_000_000, id: 'a', function: { name: 'check_room', arguments: '{}' } }] }),
            event({ tool_calls: [{ index: 0, id: 'b', function: { name: 'check_room', arguments: '{}' } }] }),
            event({}, 'tool_calls'),
            'data: [DONE]\n\n',
          ])(call, res, req);
    const { turn } = await visit({ tools: [tool()] });
    const { result, worstMs } = await healthWhile(service.url, turn());
    expect(result).toMatchObject({ type: 'reply', text: 'Room 12 is free.' });
    expect(worstMs).toBeLessThan(HEALTHY_LOOP_MS);
    expect(tools.calls.length - before).toBe(1);
  });

  it('reads a reply of 40,000 one-character pieces in time proportional to it, and stops reading at 10,000 characters', async () => {
    const pieces = Array.from({ length: 40_000 }, (_, i) => event({ content: i % 50 === 49 ? '. ' : 'a' }));
    model.state.behaviour = all([...pieces, event({}, 'stop'), 'data: [DONE]\n\n']);
    const { turn } = await visit();
    const { result, worstMs } = await healthWhile(service.url, turn());
    expect(result.type).toBe('reply');
    expect([...result.text].length).toBeLessThanOrEqual(10_000);
    expect(result.text.length).toBeGreaterThan(9_000);
    expect(worstMs).toBeLessThan(HEALTHY_LOOP_MS);
  });

  it('reads citation markers and sentence ends in one pass over 4,500 blanks and 4,500 dots (60,000 blanks held the node 6 s)', async () => {
    model.state.behaviour = all([
      ...Array.from({ length: 1_500 }, () => event({ content: '   ' })),
      event({ content: 'x [1' }),
      ...Array.from({ length: 1_500 }, () => event({ content: '...' })),
      event({ content: ' done.' }),
      event({}, 'stop'),
      'data: [DONE]\n\n',
    ]);
    const { turn } = await visit();
    const { result, worstMs } = await healthWhile(service.url, turn());
    expect(result.type).toBe('reply');
    expect(result.text.endsWith('done.')).toBe(true);
    expect(worstMs).toBeLessThan(HEALTHY_LOOP_MS);
  });

  it('refuses a call whose arguments stream past 16 KiB without keeping them, telling the model', async () => {
    const before = tools.calls.length;
    model.state.behaviour = (call, res, req) => {
      const told = call.body.messages.find((m) => m.role === 'tool');
      if (told) return send(res, streamOf('m', `The tool said: ${told.content}`));
      all([
        event({ tool_calls: [{ index: 0, id: 'a', function: { name: 'check_room', arguments: '{"x":"' } }] }),
        ...Array.from({ length: 2_000 }, () =>
          event({ tool_calls: [{ index: 0, function: { arguments: 'y'.repeat(500) } }] }),
        ),
        event({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] }),
        event({}, 'tool_calls'),
        'data: [DONE]\n\n',
      ])(call, res, req);
    };
    const { answered } = await ask({ tools: [tool()] });
    expect((await answered).text).toBe('The tool said: {"error":"the arguments are over 16384 bytes"}');
    expect(tools.calls.length).toBe(before);
  });

  it('ends the loop after five tool rounds whatever the model says, and runs at most ten calls a turn', async () => {
    const before = { tools: tools.calls.length, model: model.calls.length };
    // A model that calls three tools at once, every time, offered tools or not.
    model.state.behaviour = (call, res) =>
      send(
        res,
        toolCallStream('m', [
          { name: 'check_room', arguments: {} },
          { name: 'check_room', arguments: {} },
          { name: 'check_room', arguments: {} },
        ]),
      );
    const { answered, api, conversationId } = await ask({ tools: [tool()] });
    expect(await answered).toMatchObject({ type: 'turn_failed', reason: 'model_failed' });
    expect(model.calls.length - before.model).toBe(6);
    expect(model.calls.slice(-6).map((c) => Boolean(c.body.tools))).toEqual([true, true, true, true, true, false]);
    expect(tools.calls.length - before.tools).toBe(10);
    // Past the tenth, the model was told to answer instead.
    const told = model.calls
      .at(-2)!
      .body.messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(told.at(-1)).toBe('{"error":"at most 10 tool calls a turn: answer now"}');
    const records = (await api.get(`/api/v1/deliveries?conversation_id=${conversationId}&kind=tool`)).body.data;
    expect(records).toHaveLength(10);
  });

  it("ends a tool loop at the turn's reply timeout", async () => {
    model.state.behaviour = (call, res) =>
      void setTimeout(() => send(res, toolCallStream('m', [{ name: 'check_room', arguments: {} }])), 1_500);
    const started = Date.now();
    const before = model.calls.length;
    const { answered } = await ask({ tools: [tool()] }, { reply_timeout_s: 5 });
    // The sweep expires the turn as the loop gives up: either says the turn failed.
    expect(await answered).toMatchObject({
      type: 'turn_failed',
      reason: expect.stringMatching(/^(reply_timeout|model_failed)$/),
    });
    await new Promise((r) => setTimeout(r, 2_000));
    // Four calls fit in five seconds; nothing more is asked once the turn is over.
    expect(model.calls.length - before).toBeLessThanOrEqual(4);
    expect(Date.now() - started).toBeLessThan(12_000);
  });

  it("runs a tool that needs the visitor's word only when the model calls it again after the visitor answered, and tells the tool who the visitor is", async () => {
    const before = tools.calls.length;
    const booking = {
      ...tool('book_table', {
        type: 'object',
        properties: { guests: { type: 'integer' }, time: { type: 'string' } },
        required: ['guests', 'time'],
      }),
      confirm: true,
    };
    // A model that books at once, and again however often it is told anything.
    model.state.behaviour = (call, res) => {
      const told = call.body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      if (told.length && told.length < 3 && told.at(-1)!.includes('needs_confirmation'))
        return send(res, toolCallStream('m', [{ name: 'book_table', arguments: { time: '19:00', guests: 2 } }]));
      if (told.length) return send(res, streamOf('m', `Tool: ${told.at(-1)}`));
      send(res, toolCallStream('m', [{ name: 'book_table', arguments: { guests: 2, time: '19:00' } }]));
    };
    const { widget } = await visit({ tools: [booking] });
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'A table for two at seven', mode: 'text' });
    // Within the turn it proposed the call in, a second call is not sent either.
    expect((await widget.next('reply')).text).toMatch(/^Tool: \{"status":"needs_confirmation"/);
    expect(tools.calls.length).toBe(before);
    widget.send({ type: 'user_turn', client_turn_id: 'c2', text: 'Yes, please', mode: 'text' });
    expect((await widget.next('reply')).text).toBe('Tool: {"free":true}');
    expect(tools.calls.length).toBe(before + 1);
    expect(tools.calls.at(-1)!.body).toMatchObject({
      type: 'tool.call',
      tool: 'book_table',
      user: { sub: 'guest-1', name: null, ctx: null },
      arguments: { time: '19:00', guests: 2 },
    });
  });

  it("keeps each tool's schema to itself: the same $id in two customers' tools, and a $ref elsewhere refused on publish", async () => {
    const schema = (max: number) => ({
      $id: 'https://schemas.example/room',
      type: 'object',
      properties: { guests: { type: 'integer', maximum: max } },
      required: ['guests'],
    });
    const before = tools.calls.length;
    model.state.behaviour = (call, res) => {
      const told = call.body.messages.find((m) => m.role === 'tool');
      if (told) return send(res, streamOf('m', `Said: ${told.content}`));
      send(res, toolCallStream('m', [{ name: 'check_room', arguments: { guests: 3 } }]));
    };
    const first = await ask({ tools: [tool('check_room', schema(2))] });
    expect((await first.answered).text).toBe(
      'Said: {"error":"the arguments do not match the tool\'s parameters: data/guests must be <= 2"}',
    );
    const second = await ask({ tools: [tool('check_room', schema(4))] });
    expect((await second.answered).text).toBe('Said: {"free":true}');
    expect(tools.calls.length - before).toBe(1);

    const { apiKey } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const agentId = await createReadyAgent(api);
    for (const ref of ['https://schemas.example/other', 'other.json', '#/definitions/missing']) {
      await api.put(`/api/v1/agents/${agentId}`, {
        draft_spec: {
          responder: {
            type: 'model',
            model: 'm',
            tools: [tool('check_room', { type: 'object', properties: { a: { $ref: ref } } })],
          },
        },
      });
      const refused = await api.post(`/api/v1/agents/${agentId}/publish`);
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error.details).toEqual([
        {
          path: 'draft_spec.responder.tools.0.parameters',
          message: expect.stringMatching(/^is not a valid JSON Schema: /),
        },
      ]);
    }
  });
});

describeEachStore("a model endpoint's write-only key", (kind: StoreKind) => {
  const suite = serviceWithModel(kind);

  it('goes nowhere but the origin it was given for: moving the endpoint asks for the key again, and the audit log keeps both origins', async () => {
    const [service, model] = [suite.service(), suite.model()];
    const api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
    const created = await api.post('/api/v1/model-endpoints', {
      name: 'Provider',
      base_url: 'https://api.provider.example/v1',
      api_key: 'sk-owner-secret-4242',
    });
    const id = created.body.data.id;
    // Another path on the same origin keeps the key.
    const samePlace = await api.put(`/api/v1/model-endpoints/${id}`, { base_url: 'https://api.provider.example/v2' });
    expect(samePlace.body.data).toMatchObject({ base_url: 'https://api.provider.example/v2', api_key_last4: '4242' });
    const moved = await api.put(`/api/v1/model-endpoints/${id}`, { base_url: model.baseUrl });
    expectError(moved, 400, 'invalid_request');
    expect(moved.body.error.details).toEqual([
      {
        path: 'api_key',
        message: `required when base_url moves from https://api.provider.example to ${new URL(model.baseUrl).origin} (null removes the key)`,
      },
    ]);
    const dropped = await api.put(`/api/v1/model-endpoints/${id}`, { base_url: model.baseUrl, api_key: null });
    expect(dropped.body.data).toMatchObject({ base_url: model.baseUrl, api_key_last4: null });
    const log = (await api.get('/api/v1/audit-log?target_type=model_endpoint')).body.data;
    expect(log[0]).toMatchObject({
      action: 'model_endpoint.updated',
      changes: ['base_url', 'api_key'],
      detail: { from_origin: 'https://api.provider.example', to_origin: new URL(model.baseUrl).origin },
    });
    expect(log[1]).toMatchObject({ changes: ['base_url'], detail: null });

    // A key moved to another origin in the store itself does not open there.
    const keyed = await api.put(`/api/v1/model-endpoints/${id}`, { api_key: 'sk-owner-secret-4242' });
    expect(keyed.status).toBe(200);
    await service.app.store.db
      .updateTable('model_endpoints')
      .set({ base_url: 'http://127.0.0.2:9/v1' })
      .where('id', '=', id)
      .execute();
    const agent = await deployAgent(service, api, { responder: { type: 'model', endpoint_id: id, model: 'm' } });
    const before = model.calls.length;
    const { widget } = await agent.visitor();
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hello?', mode: 'text' });
    expect(await widget.next('turn_failed', 10_000)).toMatchObject({ reason: 'model_failed' });
    expect(model.calls.length).toBe(before);
    expect(service.logs.join('')).toContain("the model endpoint's key cannot be opened here");
    expect(service.logs.join('')).not.toContain('sk-owner-secret');
  });
});

describe("a model's stream, read", () => {
  it('keeps what it holds within its bounds: arguments, calls and text, however much streams in', async () => {
    const model = await startModelServer(
      all([
        event({ tool_calls: [{ index: 0, id: 'a', function: { name: 'x'.repeat(1_000), arguments: '' } }] }),
        ...Array.from({ length: 100 }, () =>
          event({ tool_calls: [{ index: 0, function: { arguments: 'y'.repeat(10_000) } }] }),
        ),
        ...Array.from({ length: 200 }, (_, i) =>
          event({ tool_calls: [{ index: 5 + i, id: `c${i}`, function: { name: 'check_room', arguments: '{}' } }] }),
        ),
        event({ tool_calls: [{ index: 'one', function: { name: 'check_room' } }] }),
        ...Array.from({ length: 100 }, () => event({ content: 'z'.repeat(1_000) })),
        'data: [DONE]\n\n',
      ]),
    );
    try {
      const call = await streamChat(
        { baseUrl: model.baseUrl, key: undefined, firstTokenTimeoutMs: 5_000, timeoutMs: 10_000 },
        { model: 'm', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 10 },
        { allowedHosts: parseAllowedHosts('*@127.0.0.1') },
      );
      expect(call.failure).toBeUndefined();
      expect(call.toolCalls).toHaveLength(1);
      expect(call.toolCalls[0]!.function.name).toHaveLength(65);
      expect(call.toolCalls[0]!.function.arguments).toHaveLength(STREAM_BOUNDS.argumentChars + 1);
      expect(call.droppedCalls).toBe(201);
      expect(call.text).toHaveLength(STREAM_BOUNDS.textChars);
      expect(call).toMatchObject({ cut: true, finishReason: 'length', status: 200 });
    } finally {
      await model.close();
    }
  });
});
