import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CustomerServer,
  deploy,
  mintToken,
  postReply,
  startCustomerServer,
  Widget,
} from '../../test/concierge-kit.js';
import { call, type TestService, startService, waitFor } from '../../test/harness.js';
import { transcriptEventTypes } from '#protocol/transcript-events';
import { signatureHeaders, transcriptEventBodies, turnCreatedBody } from './outbound.schemas.js';

/**
 * The schemas of what the service sends (and so the OpenAPI `webhooks` section) against the
 * calls a real customer server receives: every body must parse strictly, every header be there.
 */
describe('calls to the customer server, as described', () => {
  let service: TestService;
  let customer: CustomerServer;
  beforeAll(async () => {
    service = await startService('sqlite', { sessions: { sweepIntervalMs: 100 } });
    customer = await startCustomerServer((hook, res) => {
      if (hook.body.text === 'Now?')
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"reply_text":"Right away."}');
      else if (hook.body.text === 'Refuse this') res.writeHead(400).end();
      else res.writeHead(202).end();
    });
  });
  afterAll(async () => {
    await service.close();
    await customer.close();
  });

  it('match the turn hook and transcript event schemas exactly, with every signature header', async () => {
    const { api, deploymentId, secret } = await deploy(service, {
      hook_url: customer.hookUrl,
      transcript_hook_url: customer.transcriptUrl,
    });
    const widget = await Widget.open(service, deploymentId);
    const { conversation_id } = await widget.hello(
      await mintToken(secret, deploymentId, { claims: { name: 'Ada', ctx: { room: 12 } } }),
    );

    // The page tells its context and an event before the first turn (README, Greeting visitors first).
    widget.send({ type: 'context', data: { basket: ['room 12'] } });
    widget.send({ type: 'page_event', name: 'booking.dates', data: { nights: 2 } });
    widget.send({
      type: 'user_turn',
      client_turn_id: 'c1',
      text: 'Breakfast?',
      mode: 'text',
      page: { url: 'https://hotel.example/rooms', title: 'Rooms' },
    });
    const first = await widget.next('turn_acknowledged');
    expect(
      (
        await postReply(
          service,
          deploymentId,
          { conversation_id, turn_id: first.turn_id, reply_text: 'From 7.' },
          secret,
        )
      ).status,
    ).toBe(202);
    await widget.next('reply');
    widget.send({ type: 'feedback', turn_id: first.turn_id, rating: 'up', comment: 'Clear.' });
    await widget.next('feedback_recorded');
    widget.send({ type: 'user_turn', client_turn_id: 'c2', text: 'Now?', mode: 'voice' });
    const spoken = await widget.next('reply');
    // The visitor cut the spoken reply short: turn.interrupted, and previous_reply in the next hook body.
    widget.send({ type: 'playback', turn_id: spoken.turn_id, sentence: 0, offset_ms: 0, state: 'interrupted' });
    widget.send({ type: 'user_turn', client_turn_id: 'c3', text: 'Refuse this', mode: 'text' });
    await widget.next('turn_failed');
    // A person steps in and writes: conversation.handoff and message.created.
    expect((await api.post(`/api/v1/conversations/${conversation_id}/takeover`, { name: 'Maria' })).status).toBe(200);
    expect(
      (await api.post(`/api/v1/conversations/${conversation_id}/messages`, { text: 'Maria here.', name: 'Maria' }))
        .status,
    ).toBe(200);
    widget.send({ type: 'end' });
    await widget.next('conversation_ended');
    for (const target of ['hook', 'transcript'])
      expect((await api.post(`/api/v1/deployments/${deploymentId}/test-hook`, { target })).status).toBe(200);

    const seen = () =>
      new Set(customer.transcript.filter((c) => c.body.deployment_id === deploymentId).map((c) => c.body.type));
    // Every event but conversation.analyzed, which needs an agent asking for analysis and a model (quality.test.ts checks its body).
    await waitFor(
      async () => seen().size === transcriptEventTypes.length - 1 && customer.transcript.some((c) => c.body.test),
    );

    const hooks = customer.calls.filter((c) => c.body.deployment_id === deploymentId);
    expect(hooks.map((c) => c.body.text)).toEqual([
      'Breakfast?',
      'Now?',
      'Refuse this',
      'This is a test turn sent from test-hook. Is the hook reachable?',
    ]);
    for (const hook of hooks) {
      expect(turnCreatedBody.parse(hook.body)).toEqual(hook.body);
      for (const name of [...Object.keys(signatureHeaders), 'X-Service-Delivery'])
        expect(hook.headers[name.toLowerCase()], name).toBeTruthy();
      expect(hook.headers['content-type']).toBe('application/json');
    }
    expect(hooks[0]!.body.user).toEqual({ sub: expect.any(String), name: 'Ada', ctx: { room: 12 } });
    expect(hooks.map((c) => c.body.previous_reply)).toEqual([
      undefined,
      undefined,
      { turn_id: spoken.turn_id, heard_text: '', interrupted: true },
      undefined,
    ]);
    expect(hooks.at(-1)!.body.test).toBe(true);
    expect(hooks[0]!.body.page).toEqual({
      url: 'https://hotel.example/rooms',
      title: 'Rooms',
      context: { basket: ['room 12'] },
      events: [{ name: 'booking.dates', data: { nights: 2 }, at: expect.any(String) }],
    });
    // The events went with the turn after them only; a turn sent without a page has none.
    expect(hooks[1]!.body.page).toEqual({ url: null, title: null, context: { basket: ['room 12'] }, events: [] });

    const events = customer.transcript.filter((c) => c.body.deployment_id === deploymentId);
    for (const event of events) {
      expect(transcriptEventBodies[event.body.type as keyof typeof transcriptEventBodies].parse(event.body)).toEqual(
        event.body,
      );
      for (const name of [...Object.keys(signatureHeaders), 'X-Service-Event-Id'])
        expect(event.headers[name.toLowerCase()], name).toBeTruthy();
    }
    widget.close();
  });

  it('are the webhooks of the served OpenAPI document, by these schemas', async () => {
    const { body: doc } = await call(service.url, 'GET', '/openapi.json');
    expect(Object.keys(doc.webhooks)).toEqual([
      'turn.created',
      'tool.call',
      ...transcriptEventTypes.map((t) => `transcript.${t}`),
    ]);
    const tool = doc.webhooks['tool.call'].post;
    expect(tool.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ToolCallHook' });
    expect(doc.components.schemas.ToolCallHook.required).toEqual([
      'type',
      'call_id',
      'sent_at',
      'deployment_id',
      'conversation_id',
      'turn_id',
      'user',
      'tool',
      'arguments',
    ]);
    const hook = doc.webhooks['turn.created'].post;
    expect(hook.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/TurnCreatedHook',
    });
    expect(hook.parameters.map((p: { name: string }) => p.name).sort()).toEqual(
      ['X-Service-Delivery', ...Object.keys(signatureHeaders)].sort(),
    );
    expect(Object.keys(hook.responses)).toEqual(['200', '202', '400', '503']);
    expect(doc.components.schemas.TurnCreatedHook.required).toEqual([
      'type',
      'delivery_id',
      'sent_at',
      'deployment_id',
      'agent_id',
      'conversation_id',
      'turn_id',
      'user',
      'text',
      'mode',
      'language',
      'reply_url',
      'page',
    ]);
    expect(doc.components.schemas.TranscriptTurnFailed.properties.data.properties.reason.enum).toEqual([
      'hook_rejected',
      'hook_failed',
      'reply_timeout',
      'conversation_ended',
      'model_failed',
    ]);
  });
});
