import { describe, expect, it } from 'vitest';
import type { EgressResponse, Exchange } from '../../shared/egress.js';
import { callTurnHook, classifyHookResponse } from './hook.client.js';

const answer = (status: number, body = ''): EgressResponse => ({
  status,
  body,
  headers: {},
  bytes: Buffer.byteLength(body),
});
const exchanged = (outcome: Pick<Exchange, 'response' | 'error'>): Exchange => ({
  url: 'https://hotel.example/hook',
  sentAt: new Date().toISOString(),
  durationMs: 1,
  request: { headers: {}, body: '{}' },
  ...outcome,
});

describe("the documented reading of the hook's answer", () => {
  it('2xx acknowledges; a 2xx carrying reply_text answers at once', () => {
    expect(classifyHookResponse(answer(202))).toEqual({ kind: 'acknowledged' });
    expect(classifyHookResponse(answer(200, '{"reply_text":"From 7."}'))).toEqual({
      kind: 'replied',
      text: 'From 7.',
      actions: [],
    });
    // Not a usable reply: still only an acknowledgement.
    for (const body of [
      '{"reply_text":""}',
      '{"reply_text":42}',
      '{"reply_text":',
      'ok',
      `{"reply_text":"${'x'.repeat(10_001)}"}`,
    ]) {
      expect(classifyHookResponse(answer(200, body))).toEqual({ kind: 'acknowledged' });
    }
  });

  it('a reply with actions carries them; invalid actions make the answer a refusal that says why', () => {
    const link = { type: 'link', label: 'Book', url: 'https://hotel.example/book' };
    const quick = { type: 'quick_reply', label: '7 pm', text: 'A table at 7 pm, please' };
    const client = { type: 'client', name: 'show_rooms', args: { floor: 2 } };
    expect(
      classifyHookResponse(answer(200, JSON.stringify({ reply_text: 'Sure.', actions: [link, quick, client] }))),
    ).toEqual({ kind: 'replied', text: 'Sure.', actions: [link, quick, client] });
    for (const [actions, why] of [
      [[{ ...link, url: 'javascript:alert(1)' }], /^actions\.0\.url: /],
      [[{ ...quick, label: 'x'.repeat(41) }], /^actions\.0\.label: /],
      [[{ ...client, name: 'Show Rooms' }], /^actions\.0\.name: /],
      [[{ ...client, args: { blob: 'x'.repeat(2048) } }], /^actions\.0\.args: /],
      [Array.from({ length: 7 }, () => link), /^actions: /],
      ['book', /^actions: /],
    ] as const) {
      const outcome = classifyHookResponse(answer(201, JSON.stringify({ reply_text: 'Sure.', actions })));
      expect(outcome).toMatchObject({ kind: 'rejected', status: 201 });
      expect(outcome).toHaveProperty('why', expect.stringMatching(why));
    }
  });

  it('4xx rejects, except 408 and 429; 5xx and 3xx are tried again', () => {
    expect(classifyHookResponse(answer(400))).toEqual({ kind: 'rejected', status: 400 });
    expect(classifyHookResponse(answer(404))).toEqual({ kind: 'rejected', status: 404 });
    for (const status of [408, 429, 500, 503, 302]) expect(classifyHookResponse(answer(status))).toBeUndefined();
  });

  it('retries twice with the given delays, then fails with the last cause, keeping every attempt', async () => {
    const seen: number[] = [];
    const call = await callTurnHook(async () => {
      seen.push(Date.now());
      return exchanged({ response: answer(503) });
    }, [20, 40]);
    expect(call.outcome).toEqual({ kind: 'failed', cause: 'HTTP 503' });
    expect(call.exchanges.map((ex) => ex.response?.status)).toEqual([503, 503, 503]);
    expect(seen).toHaveLength(3);
    expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(18);
    expect(seen[2]! - seen[1]!).toBeGreaterThanOrEqual(38);
  });

  it('takes the first answer that settles it, and never retries a refused target or after a stop', async () => {
    const answers = [
      exchanged({ error: { kind: 'timeout', message: 'timed out after 5 ms' } }),
      exchanged({ response: answer(202) }),
    ];
    const settled = await callTurnHook(async () => answers.shift()!, [1, 1]);
    expect(settled.outcome).toEqual({ kind: 'acknowledged' });
    expect(settled.exchanges.map((ex) => ex.error?.kind ?? ex.response?.status)).toEqual(['timeout', 202]);

    const refused = await callTurnHook(
      async () => exchanged({ error: { kind: 'egress_refused', message: '127.0.0.1 is not allowed' } }),
      [1, 1],
    );
    expect(refused.outcome).toEqual({ kind: 'failed', cause: '127.0.0.1 is not allowed' });
    expect(refused.exchanges).toHaveLength(1);

    const stop = new AbortController();
    stop.abort();
    expect(await callTurnHook(async () => exchanged({ response: answer(202) }), [1, 1], stop.signal)).toEqual({
      outcome: { kind: 'failed', cause: 'the service is stopping' },
      exchanges: [],
    });
  });
});
