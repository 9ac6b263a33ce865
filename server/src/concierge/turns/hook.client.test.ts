import { describe, expect, it } from 'vitest';
import { EgressRefused, type EgressResponse } from '../egress.js';
import { callTurnHook, classifyHookResponse } from './hook.client.js';

const answer = (status: number, body = ''): EgressResponse => ({ status, body, headers: {} });

describe("the contract's reading of the hook's answer", () => {
  it('2xx acknowledges; a 2xx carrying reply_text answers at once', () => {
    expect(classifyHookResponse(answer(202))).toEqual({ kind: 'acknowledged' });
    expect(classifyHookResponse(answer(200, '{"reply_text":"From 7."}'))).toEqual({ kind: 'replied', text: 'From 7.' });
    // Not a usable reply: still only an acknowledgement.
    for (const body of ['{"reply_text":""}', '{"reply_text":42}', '{"reply_text":', 'ok', `{"reply_text":"${'x'.repeat(10_001)}"}`]) {
      expect(classifyHookResponse(answer(200, body))).toEqual({ kind: 'acknowledged' });
    }
  });

  it('4xx rejects, except 408 and 429; 5xx and 3xx are tried again', () => {
    expect(classifyHookResponse(answer(400))).toEqual({ kind: 'rejected', status: 400 });
    expect(classifyHookResponse(answer(404))).toEqual({ kind: 'rejected', status: 404 });
    for (const status of [408, 429, 500, 503, 302]) expect(classifyHookResponse(answer(status))).toBeUndefined();
  });

  it('retries twice with the given delays, then fails with the last cause', async () => {
    const seen: number[] = [];
    const outcome = await callTurnHook(async () => {
      seen.push(Date.now());
      return answer(503);
    }, [20, 40]);
    expect(outcome).toEqual({ kind: 'failed', cause: 'HTTP 503' });
    expect(seen).toHaveLength(3);
    expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(18);
    expect(seen[2]! - seen[1]!).toBeGreaterThanOrEqual(38);
  });

  it('takes the first answer that settles it, and never retries a refused target or after a stop', async () => {
    const answers = [answer(500), answer(202)];
    expect(await callTurnHook(async () => answers.shift()!, [1, 1])).toEqual({ kind: 'acknowledged' });

    let attempts = 0;
    const refused = await callTurnHook(async () => {
      attempts++;
      throw new EgressRefused('127.0.0.1 is not allowed');
    }, [1, 1]);
    expect(refused).toEqual({ kind: 'failed', cause: '127.0.0.1 is not allowed; refused unless its host is listed in HOOK_ALLOWED_HOSTS' });
    expect(attempts).toBe(1);

    const stop = new AbortController();
    stop.abort();
    expect(await callTurnHook(async () => answer(202), [1, 1], stop.signal)).toEqual({ kind: 'failed', cause: 'the service is stopping' });
  });
});
