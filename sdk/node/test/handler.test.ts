import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { standardWebhookHeaders } from '../../../server/src/concierge/signature.js';
import { createHookHandler, fetchHandler, nodeHandler, signBody, type TurnAnswer } from '../src/index.js';

const SECRET = `whsec_${Buffer.alloc(30, 4).toString('base64')}`;
const turnBody = (delivery: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'turn.created',
    delivery_id: delivery,
    sent_at: new Date().toISOString(),
    deployment_id: 'd',
    agent_id: 'a',
    conversation_id: 'c',
    turn_id: 't',
    user: { sub: 's', name: null, ctx: null },
    text: 'Hi',
    mode: 'text',
    language: 'en-US',
    reply_url: 'http://127.0.0.1:9/replies',
    ...extra,
  });
const eventBody = (id: string) =>
  JSON.stringify({
    id,
    type: 'conversation.ended',
    created_at: new Date().toISOString(),
    deployment_id: 'd',
    conversation_id: 'c',
    data: { reason: 'user_ended' },
  });
// Signed as the service signs its calls (server/src/concierge/signature.ts).
const signed = (body: string) =>
  standardWebhookHeaders(`msg_${Math.random().toString(36).slice(2)}`, body, [SECRET], Date.now());
const parsed = (r: { status: number; body: string }) => [r.status, JSON.parse(r.body)];

let servers: Server[] = [];
afterEach(() => {
  for (const s of servers) s.close();
  servers = [];
});
async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const toolBody = (callId: string, args: Record<string, unknown>) =>
  JSON.stringify({
    type: 'tool.call',
    call_id: callId,
    sent_at: new Date().toISOString(),
    deployment_id: 'd',
    conversation_id: 'c',
    turn_id: 't',
    tool: 'check_room',
    arguments: args,
  });

describe('createHookHandler', () => {
  it("answers a model's tool call with what onTool returns, once per call, and 500 when it throws or is missing", async () => {
    let runs = 0;
    const hook = createHookHandler({
      secrets: SECRET,
      onTool: (call) => {
        runs++;
        if (call.arguments.night === 'never') throw new Error('no such night');
        return { tool: call.tool, free: call.arguments.night === 'Friday' };
      },
      onError: () => {},
    });
    const body = toolBody('11111111-1111-4111-8111-111111111111', { night: 'Friday' });
    const headers = signed(body);
    expect(parsed(await hook.handle(body, headers))).toEqual([200, { tool: 'check_room', free: true }]);
    expect(parsed(await hook.handle(body, headers))).toEqual([200, { tool: 'check_room', free: true }]);
    expect(runs).toBe(1);
    const failing = toolBody('22222222-2222-4222-8222-222222222222', { night: 'never' });
    expect(parsed(await hook.handle(failing, signed(failing)))).toEqual([500, { error: 'handler_failed' }]);
    const noTool = createHookHandler({ secrets: SECRET, onError: () => {} });
    expect(parsed(await noTool.handle(body, signed(body)))[0]).toBe(500);
    const forged = toolBody('33333333-3333-4333-8333-333333333333', { night: 'Friday' });
    expect((await hook.handle(forged, signed(body))).status).toBe(401);
  });

  it('answers with what onTurn gives: text, an answer with actions or a handoff, nothing, or a stream', async () => {
    const answers: TurnAnswer[] = [
      'Breakfast is at 7.',
      { reply_text: 'See', actions: [{ type: 'link', label: 'Menu', url: 'https://x.test/' }] },
      { handoff: { reason: 'asked' } },
      undefined,
    ];
    const hook = createHookHandler({ secrets: SECRET, onTurn: () => answers.shift() });
    const call = async (delivery: string) => {
      const body = turnBody(delivery);
      return parsed(await hook.handle(body, signed(body)));
    };
    expect(await call('1')).toEqual([200, { reply_text: 'Breakfast is at 7.' }]);
    expect(await call('2')).toEqual([
      200,
      { reply_text: 'See', actions: [{ type: 'link', label: 'Menu', url: 'https://x.test/' }] },
    ]);
    expect(await call('3')).toEqual([200, { handoff: { reason: 'asked' } }]);
    expect(await call('4')).toEqual([202, { received: true }]);
  });

  it("streams an async iterable after its 202, through the client, to the turn's reply_url", async () => {
    const posted: any[] = [];
    const replyUrl = await listen(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks).toString();
      posted.push({ signature: req.headers['x-service-signature'] === signBody(SECRET, raw), body: JSON.parse(raw) });
      res
        .writeHead(202, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: true, data: { turn_id: 't', status: 'acknowledged', duplicate: false } }));
    });
    const hook = createHookHandler({
      secrets: SECRET,
      onTurn: async function* () {
        yield 'One ';
        yield 'two.';
      },
    });
    const body = turnBody('s1', { reply_url: `${replyUrl}/replies` });
    expect((await hook.handle(body, signed(body))).status).toBe(202);
    await expect.poll(() => posted.length).toBe(3);
    expect(posted.map((p) => p.signature)).toEqual([true, true, true]);
    expect(posted.map((p) => p.body)).toEqual([
      { conversation_id: 'c', turn_id: 't', part: 0, text: 'One ' },
      { conversation_id: 'c', turn_id: 't', part: 1, text: 'two.' },
      { conversation_id: 'c', turn_id: 't', reply_text: 'One two.' },
    ]);
  });

  it('runs your function once per delivery: a retry, even one arriving meanwhile, gets the first answer', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const hook = createHookHandler({
      secrets: SECRET,
      onTurn: async (turn) => (await gate, `answer ${++calls} to ${turn.text}`),
    });
    const body = turnBody('dup');
    const first = hook.handle(body, signed(body));
    const meanwhile = hook.handle(body, signed(body));
    release();
    expect(parsed(await first)).toEqual([200, { reply_text: 'answer 1 to Hi' }]);
    expect(parsed(await meanwhile)).toEqual([200, { reply_text: 'answer 1 to Hi' }]);
    expect(parsed(await hook.handle(body, signed(body)))).toEqual([200, { reply_text: 'answer 1 to Hi' }]);
    expect(calls).toBe(1);
  });

  it("forgets a delivery your function failed, so the service's retry runs it again", async () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    let fail = true;
    const hook = createHookHandler({
      secrets: SECRET,
      onEvent: (event) => {
        if (fail) throw new Error('database down');
        seen.push(event.id);
      },
      onError: (err) => errors.push(err),
    });
    const body = eventBody('evt_1');
    expect(parsed(await hook.handle(body, signed(body)))).toEqual([500, { error: 'handler_failed' }]);
    fail = false;
    expect(parsed(await hook.handle(body, signed(body)))).toEqual([200, { received: true }]);
    expect(parsed(await hook.handle(body, signed(body)))).toEqual([200, { received: true }]);
    expect(seen).toEqual(['evt_1']);
    expect(String(errors[0])).toContain('database down');
  });

  it('acknowledges test-hook samples without calling your function, and refuses what does not verify', async () => {
    const hook = createHookHandler({
      secrets: SECRET,
      onTurn: () => {
        throw new Error('not for samples');
      },
    });
    const sample = turnBody('t1', { test: true });
    expect(parsed(await hook.handle(sample, signed(sample)))).toEqual([202, { received: true }]);
    expect(parsed(await hook.handle(sample, {}))).toEqual([
      401,
      { error: 'missing_signature', message: expect.any(String) },
    ]);
    expect(parsed(await hook.handle('[]', signed('[]')))).toEqual([
      400,
      { error: 'invalid_body', message: expect.any(String) },
    ]);
    expect(() => createHookHandler({ secrets: [''] })).toThrow("`secrets` must hold the deployment's signing secret");
    expect(() => createHookHandler({ secrets: 'whsec_' })).toThrow('at least 24 bytes');
  });
});

describe('on a server', () => {
  it("nodeHandler reads the raw body from Node's http, and refuses other methods", async () => {
    const url = await listen(nodeHandler({ secrets: SECRET, onTurn: (turn) => `Hello ${turn.user.sub}` }));
    const body = turnBody('n1');
    const res = await fetch(url, { method: 'POST', body, headers: signed(body) });
    expect([res.status, await res.json()]).toEqual([200, { reply_text: 'Hello s' }]);
    expect((await fetch(url)).status).toBe(405);
  });

  it('works in Express on a raw body, and says what is wrong when express.json() parsed it first', async () => {
    const errors: unknown[] = [];
    const app = express();
    app.post('/raw', express.raw({ type: '*/*' }), nodeHandler({ secrets: SECRET, onTurn: () => 'raw ok' }));
    app.post(
      '/parsed',
      express.json(),
      nodeHandler({ secrets: SECRET, onTurn: () => 'never', onError: (e) => errors.push(e) }),
    );
    const url = await listen(app);
    const body = turnBody('e1');
    const raw = await fetch(`${url}/raw`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...signed(body) },
    });
    expect([raw.status, await raw.json()]).toEqual([200, { reply_text: 'raw ok' }]);
    const parsedFirst = await fetch(`${url}/parsed`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...signed(body) },
    });
    expect(parsedFirst.status).toBe(500);
    expect(String(errors[0])).toContain('without express.json()');
  });

  it('fetchHandler takes a Request and gives a Response (Next.js route handlers, Hono)', async () => {
    const handle = fetchHandler({ secrets: SECRET, onTurn: () => ({ reply_text: 'from fetch' }) });
    const body = turnBody('f1');
    const res = await handle(new Request('http://x/hook', { method: 'POST', body, headers: signed(body) }));
    expect([res.status, res.headers.get('content-type'), await res.json()]).toEqual([
      200,
      'application/json',
      { reply_text: 'from fetch' },
    ]);
    expect((await handle(new Request('http://x/hook'))).status).toBe(405);
  });
});
