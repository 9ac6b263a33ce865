import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  Widget,
  deploy,
  deployAgent,
  mintToken,
  postReply,
  sign,
  startCustomerServer,
} from '../../../test/concierge-kit.js';
import { client, deepJson, describeEachStore, type TestService, startService, waitFor } from '../../../test/harness.js';

describeEachStore('concierge sessions', (kind) => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;

  beforeAll(async () => {
    // A stop waits half a second for hook calls in flight, not the default 5 s: several tests leave one hanging.
    service = await startService(kind, { sessions: { helloTimeoutMs: 300, shutdownGraceMs: 500 } });
  });
  afterAll(async () => {
    await service.close();
  });
  // Each test has a customer of its own: what one tells its hook to do, or has called, is nobody else's.
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(() => customer.close());

  const accept = () => {
    customer.state.behaviour = (_c, res) => res.writeHead(202).end();
  };

  async function session(channel: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
    const deployed = await deploy(service, { hook_url: customer.hookUrl, ...channel }, extra);
    const widget = await Widget.open(service, deployed.deploymentId);
    const ready = await widget.hello(
      await mintToken(deployed.secret, deployed.deploymentId, { claims: { name: 'Ada', ctx: { room: 12 } } }),
    );
    return { ...deployed, widget, ready };
  }

  it('runs a turn: accepted, signed hook, acknowledged, signed reply, reply frame; duplicates are safe', async () => {
    accept();
    const { widget, ready, deploymentId, secret } = await session();
    expect(ready).toMatchObject({
      type: 'ready',
      resumed: false,
      last_seq: 0,
      agent: { name: 'Front desk', language: 'en-US' },
    });
    const before = customer.calls.length;
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'When is breakfast?', mode: 'text' });
    const accepted = await widget.next('turn_accepted');
    expect(accepted).toEqual({
      type: 'turn_accepted',
      seq: 1,
      turn_id: accepted.turn_id,
      client_turn_id: 'c1',
      text: 'When is breakfast?',
      mode: 'text',
      language: 'en-US',
    });
    expect(await widget.next('turn_acknowledged')).toEqual({
      type: 'turn_acknowledged',
      seq: 2,
      turn_id: accepted.turn_id,
    });

    const call = customer.calls[before]!;
    expect(call.headers['x-service-signature']).toBe(sign(secret, call.raw));
    expect(call.headers['x-service-delivery']).toBe(call.body.delivery_id);
    expect(call.body).toMatchObject({
      type: 'turn.created',
      deployment_id: deploymentId,
      conversation_id: ready.conversation_id,
      turn_id: accepted.turn_id,
      user: { sub: 'guest-1', name: 'Ada', ctx: { room: 12 } },
      text: 'When is breakfast?',
      mode: 'text',
      reply_url: `${service.url}/embed/concierge/${deploymentId}/replies`,
    });

    const reply = { conversation_id: ready.conversation_id, turn_id: accepted.turn_id, reply_text: 'From 7 to 10.' };
    const posted = await postReply(service, deploymentId, reply, secret);
    expect(posted).toMatchObject({
      status: 202,
      body: { success: true, data: { turn_id: accepted.turn_id, status: 'resolved', duplicate: false } },
    });
    expect(await widget.next('reply')).toEqual({
      type: 'reply',
      seq: 3,
      turn_id: accepted.turn_id,
      text: 'From 7 to 10.',
      actions: [],
    });
    expect((await postReply(service, deploymentId, reply, secret)).body.data).toEqual({
      turn_id: accepted.turn_id,
      status: 'resolved',
      duplicate: true,
    });
    const changed = await postReply(service, deploymentId, { ...reply, reply_text: 'Other' }, secret);
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('turn_already_resolved');
    widget.close();
  });

  it("carries each turn's language to the hook, the transcript and the history: the visitor's choice in its canonical case, else the agent's", async () => {
    accept();
    const { widget, ready, api } = await session({ transcript_hook_url: customer.transcriptUrl });
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hello', mode: 'text' });
    widget.send({
      type: 'user_turn',
      client_turn_id: 'c2',
      text: 'Wann gibt es Frühstück?',
      mode: 'voice',
      language: 'de-de',
    });
    widget.send({ type: 'user_turn', client_turn_id: 'c3', text: 'Hi', mode: 'text', language: 'english please' });
    expect(await widget.next('error')).toEqual({
      type: 'error',
      code: 'invalid_message',
      message: 'Invalid message: language must be a BCP 47 language tag such as de-DE',
    });
    const turns = [await widget.next('turn_acknowledged'), await widget.next('turn_acknowledged')];
    const hookCalls = await waitFor(async () => {
      const ours = customer.calls.filter((c) => c.url === '/hook' && c.body.conversation_id === ready.conversation_id);
      return ours.length === 2 && ours;
    });
    expect(hookCalls.map((c) => [c.body.text, c.body.language])).toEqual([
      ['Hello', 'en-US'],
      ['Wann gibt es Frühstück?', 'de-DE'],
    ]);
    const created = await waitFor(async () => {
      const events = customer.transcript.filter(
        (c) => c.body.conversation_id === ready.conversation_id && c.body.type === 'turn.created',
      );
      return events.length === 2 && events;
    });
    expect(created.map((c) => c.body.data.language)).toEqual(['en-US', 'de-DE']);
    const history = await api.get(`/api/v1/conversations/${ready.conversation_id}`);
    expect(history.body.data.turns.map((t: { id: string; language: string }) => [t.id, t.language])).toEqual(
      turns.map((t, i) => [t.turn_id, ['en-US', 'de-DE'][i]]),
    );
    widget.close();
  });

  it("takes the visitor's rating of a reply: the last counts, a comment with it; in the history and the transcript; refused for another conversation's turn, one not answered, or when feedback is off", async () => {
    accept();
    const { widget, ready, api, deploymentId, secret } = await session({ transcript_hook_url: customer.transcriptUrl });
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Breakfast?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    widget.send({ type: 'feedback', turn_id, rating: 'up' });
    expect(await widget.next('error')).toEqual({
      type: 'error',
      code: 'invalid_message',
      message: 'Only a turn with its reply can be rated',
    });
    await postReply(
      service,
      deploymentId,
      { conversation_id: ready.conversation_id, turn_id, reply_text: 'From 7.' },
      secret,
    );
    await widget.next('reply');
    widget.send({ type: 'feedback', turn_id, rating: 'up' });
    expect(await widget.next('feedback_recorded')).toEqual({
      type: 'feedback_recorded',
      seq: 4,
      turn_id,
      rating: 'up',
    });
    widget.send({ type: 'feedback', turn_id, rating: 'down', comment: 'Too early for me' });
    expect(await widget.next('feedback_recorded')).toEqual({
      type: 'feedback_recorded',
      seq: 5,
      turn_id,
      rating: 'down',
    });
    widget.send({ type: 'feedback', turn_id: '00000000-0000-4000-8000-000000000000', rating: 'up' });
    expect(await widget.next('error')).toEqual({
      type: 'error',
      code: 'invalid_message',
      message: 'No such turn in this conversation',
    });
    widget.send({ type: 'feedback', turn_id, rating: 'meh' });
    expect((await widget.next('error')).code).toBe('invalid_message');

    const history = await api.get(`/api/v1/conversations/${ready.conversation_id}`);
    expect(history.body.data.turns[0].feedback).toEqual({
      rating: 'down',
      comment: 'Too early for me',
      at: expect.any(String),
    });
    const rated = await waitFor(async () => {
      const events = customer.transcript.filter(
        (c) => c.body.conversation_id === ready.conversation_id && c.body.type === 'turn.rated',
      );
      return events.length === 2 && events;
    });
    expect(rated.map((c) => c.body.data)).toEqual([
      { turn_id, rating: 'up', comment: null },
      { turn_id, rating: 'down', comment: 'Too early for me' },
    ]);

    const off = await session({ widget: { feedback: false } });
    off.widget.send({ type: 'feedback', turn_id, rating: 'up' });
    expect(await off.widget.next('error')).toEqual({
      type: 'error',
      code: 'invalid_message',
      message: 'Feedback is off for this deployment',
    });
    off.widget.close();
    widget.close();
  });

  it('takes a reply posted before the hook answer arrives: it waits for the acknowledgement', async () => {
    const { widget, ready, deploymentId, secret } = await session();
    let posted: ReturnType<typeof postReply> | undefined;
    customer.state.behaviour = (call, res) => {
      // The customer's reply races its own 202: it is sent first and the 202 follows 200 ms later.
      posted = postReply(
        service,
        deploymentId,
        { conversation_id: ready.conversation_id, turn_id: call.body.turn_id, reply_text: 'Early bird.' },
        secret,
      );
      setTimeout(() => res.writeHead(202).end(), 200);
    };
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Quick?', mode: 'text' });
    const accepted = await widget.next('turn_accepted');
    await widget.next('turn_acknowledged');
    expect(await widget.next('reply')).toEqual({
      type: 'reply',
      seq: 3,
      turn_id: accepted.turn_id,
      text: 'Early bird.',
      actions: [],
    });
    expect(await posted).toMatchObject({
      status: 202,
      body: { data: { turn_id: accepted.turn_id, duplicate: false } },
    });
    widget.close();
  });

  it('resolves at once on a synchronous reply_text', async () => {
    customer.state.behaviour = (_c, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reply_text: 'Right away.' }));
    const { widget } = await session();
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'voice' });
    const accepted = await widget.next('turn_accepted');
    await widget.next('turn_acknowledged');
    expect(await widget.next('reply')).toEqual({
      type: 'reply',
      seq: 3,
      turn_id: accepted.turn_id,
      text: 'Right away.',
      actions: [],
    });
    widget.close();
  });

  it('retries a 5xx with the same delivery id, then takes the success', async () => {
    let n = 0;
    customer.state.behaviour = (_c, res) => res.writeHead(n++ === 0 ? 503 : 202).end();
    const before = customer.calls.length;
    const { widget } = await session();
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    await widget.next('turn_acknowledged');
    const calls = customer.calls.slice(before);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.headers['x-service-delivery']).toBe(calls[0]!.headers['x-service-delivery']);
    widget.close();
  });

  it('fails a turn the hook rejects with 4xx, without retrying', async () => {
    customer.state.behaviour = (_c, res) => res.writeHead(400).end();
    const before = customer.calls.length;
    const { widget } = await session();
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    const accepted = await widget.next('turn_accepted');
    expect(await widget.next('turn_failed')).toEqual({
      type: 'turn_failed',
      seq: 2,
      turn_id: accepted.turn_id,
      reason: 'hook_rejected',
    });
    expect(customer.calls.length - before).toBe(1);
    widget.close();
  });

  it('fails a turn whose hook times out three times as hook_failed', async () => {
    customer.state.behaviour = () => {}; // never answers
    const before = customer.calls.length;
    const { widget } = await session({}, { runtime_config: { hook_timeout_ms: 500 } });
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    expect((await widget.next('turn_failed', 8_000)).reason).toBe('hook_failed');
    expect(customer.calls.length - before).toBe(3);
    widget.close();
  }, 15_000);

  it('refuses replies on every signature failure, and on a turn that is pending, expired or elsewhere', async () => {
    let release: () => void = () => {};
    customer.state.behaviour = (_c, res) => {
      release = () => res.writeHead(202).end();
    };
    const { widget, ready, deploymentId, secret, api } = await session({}, { runtime_config: { reply_timeout_s: 5 } });
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    const { turn_id } = await widget.next('turn_accepted');
    const reply = { conversation_id: ready.conversation_id, turn_id, reply_text: 'Yes' };
    const raw = JSON.stringify(reply);
    const expectCode = async (res: Promise<{ status: number; body: any }>, status: number, code: string) => {
      const r = await res;
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    };

    await expectCode(postReply(service, deploymentId, reply, secret), 409, 'turn_not_acknowledged');
    release();
    await widget.next('turn_acknowledged');

    await expectCode(postReply(service, deploymentId, reply, secret, { signature: '' }), 401, 'invalid_signature');
    await expectCode(
      postReply(service, deploymentId, reply, secret, { signature: sign(secret, raw).replace('sha256=', 'sha1=') }),
      401,
      'invalid_signature',
    );
    await expectCode(
      postReply(service, deploymentId, reply, secret, {
        signature: sign(secret, raw).toUpperCase().replace('SHA256=', 'sha256='),
      }),
      401,
      'invalid_signature',
    );
    const spaced = JSON.stringify(reply, null, 2);
    await expectCode(
      postReply(service, deploymentId, reply, secret, {
        raw: spaced,
        signature: sign(secret, JSON.stringify(JSON.parse(spaced))),
      }),
      401,
      'invalid_signature',
    );
    await expectCode(postReply(service, deploymentId, reply, 'whsec_wrong'), 401, 'invalid_signature');
    await expectCode(
      postReply(service, deploymentId, reply, secret, { contentType: 'text/plain' }),
      415,
      'unsupported_media_type',
    );
    await expectCode(
      postReply(service, deploymentId, reply, secret, { raw: 'x'.repeat(65 * 1024) }),
      413,
      'payload_too_large',
    );
    await expectCode(postReply(service, deploymentId, reply, secret, { raw: '{nope' }), 400, 'invalid_json');
    await expectCode(postReply(service, deploymentId, { ...reply, extra: 1 }, secret), 400, 'invalid_request');
    await expectCode(postReply(service, '00000000-0000-4000-8000-000000000000', reply, secret), 404, 'not_found');
    const other = await deploy(service, { hook_url: customer.hookUrl });
    await expectCode(postReply(service, other.deploymentId, reply, other.secret), 404, 'turn_not_found');

    // The previous secret verifies inside its grace period only.
    const rotated = await api.post(`/api/v1/deployments/${deploymentId}/rotate-secret`, { grace_period_s: 60 });
    const spare = { ...reply, turn_id: '00000000-0000-4000-8000-000000000001' };
    await expectCode(postReply(service, deploymentId, spare, secret), 404, 'turn_not_found');
    const current = (await api.post(`/api/v1/deployments/${deploymentId}/rotate-secret`, { grace_period_s: 0 })).body
      .data.signing_secret;
    await expectCode(
      postReply(service, deploymentId, spare, rotated.body.data.signing_secret),
      401,
      'invalid_signature',
    );

    // Past reply_timeout_s the turn expires: the widget is told, and a late reply is refused.
    expect(await widget.next('turn_failed', 9_000)).toMatchObject({ turn_id, reason: 'reply_timeout' });
    await expectCode(postReply(service, deploymentId, reply, current), 409, 'turn_not_pending');
    widget.close();
  }, 20_000);

  it('resumes with conversation_id + last_seq and replays exactly what is missing; a resent turn makes no second turn', async () => {
    accept();
    const { widget, ready, deploymentId, secret } = await session();
    const before = customer.calls.length;
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    const { turn_id } = await widget.next('turn_accepted');
    await widget.next('turn_acknowledged');
    widget.close();
    await postReply(
      service,
      deploymentId,
      { conversation_id: ready.conversation_id, turn_id, reply_text: 'Hello again' },
      secret,
    );

    const again = await Widget.open(service, deploymentId);
    const resumed = await again.hello(await mintToken(secret, deploymentId), {
      conversation_id: ready.conversation_id,
      last_seq: 1,
    });
    expect(resumed).toMatchObject({ resumed: true, conversation_id: ready.conversation_id, last_seq: 3 });
    expect(await again.next('turn_acknowledged')).toMatchObject({ seq: 2 });
    expect(await again.next('reply')).toMatchObject({ seq: 3, text: 'Hello again' });
    again.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    again.send({ type: 'user_turn', client_turn_id: 'c2', text: 'Next', mode: 'text' });
    expect(await again.next('turn_accepted')).toMatchObject({ seq: 4, client_turn_id: 'c2' });
    expect(again.frames.filter((f) => f.type === 'turn_accepted')).toHaveLength(1);
    await waitFor(async () => customer.calls.length - before === 2);

    // Another user cannot resume it; an unknown conversation is 4404.
    const stranger = await Widget.open(service, deploymentId);
    stranger.send({
      type: 'hello',
      token: await mintToken(secret, deploymentId, { sub: 'guest-2' }),
      conversation_id: ready.conversation_id,
    });
    expect((await stranger.closed).code).toBe(4403);
    const lost = await Widget.open(service, deploymentId);
    lost.send({
      type: 'hello',
      token: await mintToken(secret, deploymentId),
      conversation_id: '00000000-0000-4000-8000-000000000000',
    });
    expect((await lost.closed).code).toBe(4404);
    again.close();
  });

  it('refuses bad tokens with the documented close codes', async () => {
    const { deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    const closeCodeFor = async (token: string) => {
      const w = await Widget.open(service, deploymentId);
      w.send({ type: 'hello', token });
      return (await w.closed).code;
    };
    const past = Math.floor(Date.now() / 1000) - 3600;
    expect(await closeCodeFor(await mintToken(secret, deploymentId, { iat: past, ttlS: 60 }))).toBe(4401);
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'x', aud: deploymentId, iat: past + 3600, exp: past + 4000 })).toString('base64url')}.`;
    expect(await closeCodeFor(none)).toBe(4401);
    expect(await closeCodeFor(await mintToken(secret, '00000000-0000-4000-8000-000000000000'))).toBe(4403);
    expect(await closeCodeFor(await mintToken('whsec_wrong', deploymentId))).toBe(4401);
    expect(await closeCodeFor(await mintToken(secret, deploymentId, { ttlS: 86_401 }))).toBe(4401);
    expect(await closeCodeFor('not-a-jwt')).toBe(4401);
    // Whatever iat says, a token may not live past 24 h from now, nor be issued in the future.
    const now = Math.floor(Date.now() / 1000);
    expect(
      await closeCodeFor(await mintToken(secret, deploymentId, { iat: now + 10 * 365 * 86_400, ttlS: 86_400 })),
    ).toBe(4401);
    expect(await closeCodeFor(await mintToken(secret, deploymentId, { iat: 1e300 - 1_000, ttlS: 1_000 }))).toBe(4401);
    // Claims are held to the text hygiene rule like any other input.
    expect(await closeCodeFor(await mintToken(secret, deploymentId, { sub: 'guest\u0000' }))).toBe(4401);
    expect(await closeCodeFor(await mintToken(secret, deploymentId, { claims: { name: 'Ada\ud800' } }))).toBe(4401);
    expect(
      await closeCodeFor(await mintToken(secret, deploymentId, { claims: { ctx: JSON.parse(deepJson(40)) } })),
    ).toBe(4401);
  });

  it('closes a disallowed Origin (4403) and an unknown deployment (4404) at once, saying which', async () => {
    const { deploymentId } = await deploy(service, {
      hook_url: customer.hookUrl,
      allowed_origins: ['https://hotel.example'],
    });
    const refused = await Widget.open(service, deploymentId, { origin: 'https://evil.example' });
    expect(await refused.closed).toEqual({ code: 4403, reason: 'origin_not_allowed' });
    const ok = await Widget.open(service, deploymentId, { origin: 'https://hotel.example' });
    ok.close();
    const unknown = await Widget.open(service, '00000000-0000-4000-8000-000000000000');
    expect(await unknown.closed).toEqual({ code: 4404, reason: 'unknown_deployment' });
  });

  it('closes 4408 without hello, 4400 on a bad first frame, 1009 on an oversized frame; later junk gets invalid_message', async () => {
    const { deploymentId } = await deploy(service, { hook_url: customer.hookUrl });
    const silent = await Widget.open(service, deploymentId);
    expect((await silent.closed).code).toBe(4408);
    const junk = await Widget.open(service, deploymentId);
    junk.send('not json');
    expect((await junk.closed).code).toBe(4400);
    const big = await Widget.open(service, deploymentId);
    big.send('x'.repeat(17 * 1024));
    expect((await big.closed).code).toBe(1009);

    accept();
    const { widget } = await session();
    widget.send('{"type":"user_turn"');
    widget.send({ type: 'user_turn', client_turn_id: 'x', text: '', mode: 'text' });
    expect(await widget.next('error')).toMatchObject({ code: 'invalid_message' });
    expect(await widget.next('error')).toMatchObject({ code: 'invalid_message' });
    widget.close();
  });

  it('answers ping with pong, stores neither, and takes ping only after hello', async () => {
    accept();
    const { widget, deploymentId, secret } = await session();
    customer.state.behaviour = () => undefined; // the hook call hangs: turn_accepted is the only event stored
    widget.send({ type: 'user_turn', client_turn_id: 'p1', text: 'Still there?', mode: 'text' });
    widget.send({ type: 'ping' });
    expect(await widget.next('pong', 1_000)).toEqual({ type: 'pong' });
    await widget.next('turn_accepted');
    const resumed = await Widget.open(service, deploymentId);
    const ready = await resumed.hello(await mintToken(secret, deploymentId, { claims: { name: 'Ada' } }), {
      conversation_id: widget.frames[0].conversation_id,
      last_seq: 0,
    });
    expect(ready.last_seq).toBe(1);
    resumed.close();
    widget.close();

    const first = await Widget.open(service, deploymentId);
    first.send({ type: 'ping' });
    expect((await first.closed).code).toBe(4400);
    expect(first.frames).toEqual([]);
  });

  it('refuses U+0000, unpaired surrogates and deep nesting in any field of a message, then carries on', async () => {
    accept();
    const { widget } = await session();
    const before = customer.calls.length;
    const bad: [unknown, string][] = [
      [
        { type: 'user_turn', client_turn_id: 'a', text: 'Hi\u0000there', mode: 'text' },
        'message.text must not contain the character U+0000',
      ],
      [
        { type: 'user_turn', client_turn_id: 'b\u0000', text: 'Hi', mode: 'text' },
        'message.client_turn_id must not contain the character U+0000',
      ],
      [
        { type: 'user_turn', client_turn_id: 'c', text: 'Hi \ud83d', mode: 'text' },
        'message.text must not contain an unpaired UTF-16 surrogate',
      ],
      // Built as text: JSON.stringify itself cannot write something this deep.
      [
        `{"type":"user_turn","client_turn_id":"d","text":"Hi","mode":"text","extra":${deepJson(2_000)}}`,
        `message.extra${'.a'.repeat(31)} nested deeper than 32 levels`,
      ],
      [{ type: 'user_turn', 'key\u0000': 1 }, 'message.key\u0000 must not contain the character U+0000'],
    ];
    for (const [frame, message] of bad) {
      widget.send(frame);
      expect(await widget.next('error')).toEqual({ type: 'error', code: 'invalid_message', message });
    }
    widget.send({ type: 'user_turn', client_turn_id: 'ok', text: 'Hi \ud83d\ude00', mode: 'text' });
    expect(await widget.next('turn_accepted')).toMatchObject({ seq: 1, client_turn_id: 'ok', text: 'Hi \ud83d\ude00' });
    await widget.next('turn_acknowledged');
    expect(customer.calls.length - before).toBe(1);
    widget.close();
  });

  it('keeps serving through a burst of 1,000 malformed frames and requests', async () => {
    accept();
    const { widget, deploymentId } = await session();
    for (let i = 0; i < 1000; i++) widget.send(i % 2 ? '\u0000garbage' : { type: 'nope', i });
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        fetch(`${service.url}/embed/concierge/${deploymentId}/replies`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: i % 2 ? '{' : '[]',
        }).then((r) => r.arrayBuffer()),
      ),
    );
    await waitFor(async () => widget.frames.filter((f) => f.type === 'error').length === 1000, 10_000);
    widget.send({ type: 'user_turn', client_turn_id: 'after', text: 'Still there?', mode: 'text' });
    expect(await widget.next('turn_acknowledged')).toMatchObject({ type: 'turn_acknowledged' });
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    widget.close();
  }, 30_000);

  it('enforces max_pending_turns and ends the conversation on deactivation (event, then 4410)', async () => {
    customer.state.behaviour = () => {}; // holds every turn pending
    const { widget, api, deploymentId } = await session(
      {},
      { engagement_rules: { max_pending_turns: 1 }, runtime_config: { hook_timeout_ms: 15_000 } },
    );
    widget.send({ type: 'user_turn', client_turn_id: 'a', text: 'One', mode: 'text' });
    await widget.next('turn_accepted');
    widget.send({ type: 'user_turn', client_turn_id: 'b', text: 'Two', mode: 'text' });
    expect(await widget.next('error')).toMatchObject({ code: 'too_many_pending_turns' });
    expect((await api.post(`/api/v1/deployments/${deploymentId}/deactivate`, {})).status).toBe(200);
    // The turn still waiting fails first, in the same commit: no reply can resolve it any more.
    expect(await widget.next('turn_failed')).toMatchObject({ seq: 2, reason: 'conversation_ended' });
    expect(await widget.next('conversation_ended')).toMatchObject({ seq: 3, reason: 'deployment_inactive' });
    expect((await widget.closed).code).toBe(4410);
    // Inactive: a new socket is closed at once with 4410.
    const late = await Widget.open(service, deploymentId);
    expect(await late.closed).toEqual({ code: 4410, reason: 'deployment_inactive' });
  });

  it('refuses turns past turns_per_minute, and ends the conversation past max_turns_per_conversation', async () => {
    accept();
    const limited = await session({}, { engagement_rules: { turns_per_minute: 2, max_pending_turns: 10 } });
    for (const id of ['a', 'b']) {
      limited.widget.send({ type: 'user_turn', client_turn_id: id, text: id, mode: 'text' });
      await limited.widget.next('turn_accepted');
    }
    limited.widget.send({ type: 'user_turn', client_turn_id: 'c', text: 'c', mode: 'text' });
    expect(await limited.widget.next('error')).toEqual({
      type: 'error',
      code: 'rate_limited',
      message: 'At most 2 turns a minute',
    });
    expect(limited.widget.frames.filter((f) => f.type === 'turn_accepted')).toHaveLength(2);
    limited.widget.close();

    const short = await session({}, { engagement_rules: { max_turns_per_conversation: 1 } });
    short.widget.send({ type: 'user_turn', client_turn_id: 'a', text: 'a', mode: 'text' });
    await short.widget.next('turn_accepted');
    short.widget.send({ type: 'user_turn', client_turn_id: 'b', text: 'b', mode: 'text' });
    expect(await short.widget.next('conversation_ended')).toMatchObject({ reason: 'max_turns' });
    expect((await short.widget.closed).code).toBe(4410);
  });

  it('lets one sub start 10 conversations on a deployment in 10 minutes; the 11th is refused, resuming never is', async () => {
    const { deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    const token = await mintToken(secret, deploymentId, { sub: 'busy-visitor' });
    const started: string[] = [];
    for (let i = 0; i < 10; i++) {
      const w = await Widget.open(service, deploymentId);
      started.push((await w.hello(token)).conversation_id);
      w.close();
    }
    const eleventh = await Widget.open(service, deploymentId);
    eleventh.send({ type: 'hello', token });
    expect(await eleventh.next('error')).toMatchObject({ code: 'rate_limited' });
    expect((await eleventh.closed).code).toBe(4429);

    const back = await Widget.open(service, deploymentId);
    expect(await back.hello(token, { conversation_id: started[0]!, last_seq: 0 })).toMatchObject({
      resumed: true,
      conversation_id: started[0],
    });
    const other = await Widget.open(service, deploymentId);
    expect(await other.hello(await mintToken(secret, deploymentId, { sub: 'another-visitor' }))).toMatchObject({
      resumed: false,
    });
    back.close();
    other.close();
  });

  it('takes five sockets on one conversation and closes the sixth with 4429', async () => {
    accept();
    const { widget, ready, deploymentId, secret } = await session();
    const token = await mintToken(secret, deploymentId, { claims: { name: 'Ada' } });
    const more: Widget[] = [];
    for (let i = 0; i < 4; i++) {
      const w = await Widget.open(service, deploymentId);
      expect(await w.hello(token, { conversation_id: ready.conversation_id, last_seq: 0 })).toMatchObject({
        resumed: true,
      });
      more.push(w);
    }
    const sixth = await Widget.open(service, deploymentId);
    sixth.send({ type: 'hello', token, conversation_id: ready.conversation_id, last_seq: 0 });
    expect((await sixth.closed).code).toBe(4429);
    // Every open socket of the conversation gets its events.
    widget.send({ type: 'user_turn', client_turn_id: 'a', text: 'All of you?', mode: 'text' });
    for (const w of [widget, ...more])
      expect(await w.next('turn_accepted')).toMatchObject({ seq: 1, text: 'All of you?' });
    for (const w of [widget, ...more]) w.close();
  });

  it('moves the expiry to a refreshed token: the socket outlives the first one; an exp no later is refused', async () => {
    accept();
    const { deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    const now = Math.floor(Date.now() / 1000);
    // Expired 28 s ago: inside the 30 s tolerance, so the server's timer ends the socket about 2 s from now.
    const nearlyDone = await mintToken(secret, deploymentId, { iat: now - 60, ttlS: 32 });
    const widget = await Widget.open(service, deploymentId);
    await widget.hello(nearlyDone);
    widget.send({ type: 'refresh_token', token: nearlyDone });
    expect(await widget.next('error')).toMatchObject({
      code: 'invalid_message',
      message: 'A refreshed token must expire later than the current one',
    });
    widget.send({ type: 'refresh_token', token: await mintToken(secret, deploymentId, { ttlS: 600 }) });
    await new Promise((r) => setTimeout(r, 3_000));
    widget.send({ type: 'user_turn', client_turn_id: 'later', text: 'Still with you?', mode: 'text' });
    expect(await widget.next('turn_acknowledged')).toMatchObject({ type: 'turn_acknowledged' });
    expect(widget.frames.filter((f) => f.type === 'error')).toHaveLength(1);

    // Without a refresh the same token does end the socket: the timer above is what was moved.
    const lapsed = await Widget.open(service, deploymentId);
    const later = Math.floor(Date.now() / 1000);
    await lapsed.hello(await mintToken(secret, deploymentId, { iat: later - 60, ttlS: 32 }));
    expect(await lapsed.next('error', 5_000)).toMatchObject({ code: 'token_expired' });
    expect((await lapsed.closed).code).toBe(4401);
    widget.close();
  });

  it('refreshes the token for the same user only, and accepts the previous secret only inside its grace', async () => {
    accept();
    const { widget, deploymentId, secret, api } = await session();
    widget.send({ type: 'refresh_token', token: await mintToken(secret, deploymentId, { ttlS: 7200 }) });
    widget.send({ type: 'user_turn', client_turn_id: 'a', text: 'Still here', mode: 'text' });
    expect(await widget.next('turn_accepted')).toMatchObject({ text: 'Still here' });
    widget.send({ type: 'refresh_token', token: await mintToken(secret, deploymentId, { sub: 'someone-else' }) });
    expect((await widget.closed).code).toBe(4403);

    const withGrace = (await api.post(`/api/v1/deployments/${deploymentId}/rotate-secret`, { grace_period_s: 60 })).body
      .data.signing_secret;
    const old = await Widget.open(service, deploymentId);
    expect(await old.hello(await mintToken(secret, deploymentId))).toMatchObject({ type: 'ready' });
    old.close();
    await api.post(`/api/v1/deployments/${deploymentId}/rotate-secret`, { grace_period_s: 0 });
    const stale = await Widget.open(service, deploymentId);
    stale.send({ type: 'hello', token: await mintToken(withGrace, deploymentId) });
    expect((await stale.closed).code).toBe(4401);
  });

  it('keeps undelivered transcript events across a restart and delivers them after it, same ids', async () => {
    accept();
    customer.state.transcriptStatus = 503;
    const { widget, ready } = await session({ transcript_hook_url: customer.transcriptUrl });
    widget.close();
    const refused = await waitFor(async () =>
      customer.transcript.find((c) => c.body.conversation_id === ready.conversation_id),
    );
    const ours = () => customer.transcript.filter((c) => c.body.conversation_id === ready.conversation_id);
    service = await service.restart();
    // The old process is gone; what arrives from here on comes from the new one, and is accepted.
    const attemptsBefore = ours().length;
    customer.state.transcriptStatus = 200;
    await waitFor(async () => ours().length > attemptsBefore, 10_000);
    expect(new Set(ours().map((c) => c.body.id))).toEqual(new Set([refused.body.id]));
    expect(ours().at(-1)!.body.type).toBe('conversation.started');
    // Delivered: no further attempts.
    const delivered = ours().length;
    await new Promise((r) => setTimeout(r, 2_500));
    expect(ours()).toHaveLength(delivered);
  }, 20_000);

  it('fails the turns still waiting when a conversation ends, so a late reply is refused and stored nowhere', async () => {
    accept();
    const { widget, ready, deploymentId, secret } = await session({ transcript_hook_url: customer.transcriptUrl });
    widget.send({ type: 'user_turn', client_turn_id: 'a', text: 'Room service?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    widget.send({ type: 'end' });
    expect(await widget.next('turn_failed')).toEqual({
      type: 'turn_failed',
      seq: 3,
      turn_id,
      reason: 'conversation_ended',
    });
    expect(await widget.next('conversation_ended')).toEqual({
      type: 'conversation_ended',
      seq: 4,
      reason: 'user_ended',
    });
    expect((await widget.closed).code).toBe(4410);

    const late = await postReply(
      service,
      deploymentId,
      { conversation_id: ready.conversation_id, turn_id, reply_text: 'Too late' },
      secret,
    );
    expect([late.status, late.body.error?.code]).toEqual([409, 'turn_not_pending']);
    const replay = await Widget.open(service, deploymentId);
    replay.send({
      type: 'hello',
      token: await mintToken(secret, deploymentId),
      conversation_id: ready.conversation_id,
      last_seq: 0,
    });
    await replay.closed;
    expect(replay.frames.filter((f) => f.seq !== undefined).map((f) => f.type)).toEqual([
      'turn_accepted',
      'turn_acknowledged',
      'turn_failed',
      'conversation_ended',
    ]);
    const types = await waitFor(async () => {
      const ours = customer.transcript
        .filter((c) => c.body.conversation_id === ready.conversation_id)
        .map((c) => c.body.type);
      return ours.includes('conversation.ended') && ours;
    });
    expect(types.slice(-2)).toEqual(['turn.failed', 'conversation.ended']);
  });

  it('cuts off a hook call still running when a stop has waited long enough: the turn fails, the stop ends', async () => {
    customer.state.behaviour = () => {}; // takes the call and never answers
    const { widget, ready, deploymentId, secret } = await session({}, { runtime_config: { hook_timeout_ms: 15_000 } });
    const calls = customer.calls.length;
    widget.send({ type: 'user_turn', client_turn_id: 'slow', text: 'Anyone there?', mode: 'text' });
    const { turn_id, seq } = await widget.next('turn_accepted');
    await waitFor(async () => customer.calls.length > calls);
    widget.close();
    const stopping = Date.now();
    service = await service.restart();
    expect(Date.now() - stopping).toBeLessThan(3_000);
    const back = await Widget.open(service, deploymentId);
    await back.hello(await mintToken(secret, deploymentId), { conversation_id: ready.conversation_id, last_seq: seq });
    expect(await back.next('turn_failed')).toEqual({
      type: 'turn_failed',
      seq: seq + 1,
      turn_id,
      reason: 'hook_failed',
    });
    expect(customer.calls.length - calls).toBe(1);
    back.close();
  });

  it('opens an outbound conversation with the greeting as seq 1, and ends it on request', async () => {
    accept();
    const { widget } = await session({}, { call_direction: 'outbound' });
    expect(await widget.next('greeting')).toEqual({
      type: 'greeting',
      seq: 1,
      text: 'Hello, this is the front desk. How can I help you today?',
    });
    widget.send({ type: 'end' });
    expect(await widget.next('conversation_ended')).toEqual({
      type: 'conversation_ended',
      seq: 2,
      reason: 'user_ended',
    });
    expect((await widget.closed).code).toBe(4410);
  });

  it("greets in the visitor's language: `ready` carries the greeting in each, an outbound one is stored in the one `hello` chose", async () => {
    accept();
    const api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
    const greeting = { en: 'Welcome to the hotel.', de: 'Willkommen im Hotel.', 'fr-CA': 'Bienvenue à l’hôtel.' };
    const agent = await deployAgent(
      service,
      api,
      { greeting, language: 'en-GB' },
      { channel_config: { hook_url: customer.hookUrl }, call_direction: 'outbound' },
    );
    const greeted = async (language?: string) => {
      const widget = await Widget.open(service, agent.deploymentId);
      const ready = await widget.hello(await mintToken(agent.secret, agent.deploymentId), language ? { language } : {});
      const first = await widget.next('greeting');
      widget.close();
      return { agent: ready.agent, first };
    };
    const english = await greeted();
    expect(english.agent).toMatchObject({ greeting: 'Welcome to the hotel.', greetings: greeting, language: 'en-GB' });
    expect(english.first).toEqual({ type: 'greeting', seq: 1, text: 'Welcome to the hotel.' });
    expect((await greeted('de-AT')).first.text).toBe('Willkommen im Hotel.');
    expect((await greeted('fr-FR')).first.text).toBe('Bienvenue à l’hôtel.');
    expect((await greeted('ja-JP')).first.text).toBe('Welcome to the hotel.');

    // A greeting per language is checked on publish like any spec field.
    const refused = await api.put(`/api/v1/agents/${agent.agentId}`, {
      draft_spec: { greeting: { 'not a tag!': 'Hi' } },
    });
    expect(refused.status).toBe(200);
    const publish = await api.post(`/api/v1/agents/${agent.agentId}/publish`);
    expect(publish.status).toBe(400);
    expect(publish.body.error.details).toEqual([
      { path: 'draft_spec.greeting', message: 'keys must be language tags such as de or de-DE' },
    ]);
  });

  it("signs hook calls and transcript events the Standard Webhooks way too: the specification's library verifies them, under both secrets while a rotation's grace runs", async () => {
    accept();
    const { widget, ready, api, deploymentId, secret } = await session({ transcript_hook_url: customer.transcriptUrl });
    const standard = (headers: IncomingHttpHeaders) => ({
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    });
    const hookCall = (text: string) =>
      customer.calls.find((c) => c.body.text === text && c.body.conversation_id === ready.conversation_id)!;

    widget.send({ type: 'user_turn', client_turn_id: 'sw1', text: 'Standard?', mode: 'text' });
    await widget.next('turn_acknowledged');
    const hook = hookCall('Standard?');
    expect(hook.headers['webhook-id']).toBe(hook.body.delivery_id);
    expect(Math.abs(Number(hook.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(new Webhook(secret).verify(hook.raw, standard(hook.headers))).toEqual(hook.body);

    await waitFor(async () =>
      customer.transcript.some(
        (e) => e.body.conversation_id === ready.conversation_id && e.body.type === 'turn.created',
      ),
    );
    const event = customer.transcript.find(
      (e) => e.body.conversation_id === ready.conversation_id && e.body.type === 'turn.created',
    )!;
    expect(event.headers['webhook-id']).toBe(event.body.id);
    expect(new Webhook(secret).verify(event.raw, standard(event.headers))).toEqual(event.body);

    const rotated = (await api.post(`/api/v1/deployments/${deploymentId}/rotate-secret`, { grace_period_s: 60 })).body
      .data.signing_secret;
    widget.send({ type: 'user_turn', client_turn_id: 'sw2', text: 'Rotated?', mode: 'text' });
    await widget.next('turn_acknowledged');
    const during = hookCall('Rotated?');
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const key of [rotated, secret])
      expect(new Webhook(key).verify(during.raw, standard(during.headers))).toEqual(during.body);
    widget.close();
  });

  it('delivers signed transcript events in order, retrying until a 2xx', async () => {
    accept();
    customer.state.transcriptStatus = 500;
    const { widget, ready, deploymentId, secret } = await session({ transcript_hook_url: customer.transcriptUrl });
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    const { turn_id } = await widget.next('turn_accepted');
    await widget.next('turn_acknowledged');
    await postReply(
      service,
      deploymentId,
      { conversation_id: ready.conversation_id, turn_id, reply_text: 'Hello' },
      secret,
    );
    await waitFor(async () => customer.transcript.length >= 1);
    customer.state.transcriptStatus = 200;
    const delivered = await waitFor(async () => {
      const ours = customer.transcript.filter((c) => c.body.conversation_id === ready.conversation_id);
      const types = [...new Set(ours.map((c) => c.body.type))];
      return types.length === 4 && ours;
    }, 10_000);
    expect([...new Set(delivered.map((c) => c.body.type))]).toEqual([
      'conversation.started',
      'turn.created',
      'turn.acknowledged',
      'turn.resolved',
    ]);
    for (const c of delivered) {
      expect(c.headers['x-service-signature']).toBe(sign(secret, c.raw));
      expect(c.headers['x-service-event-id']).toBe(c.body.id);
      expect(c.body.id).toMatch(/^evt_/);
    }
    widget.close();
  }, 20_000);
});

describe('websocket upgrades elsewhere', () => {
  it('refuses an upgrade on any other path', async () => {
    const service = await startService('sqlite');
    try {
      const ws = new WebSocket(`${service.url.replace('http', 'ws')}/api/v1/agents`);
      const status = await new Promise((resolve) =>
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode)),
      );
      expect(status).toBe(404);
    } finally {
      await service.close();
    }
  });
});
