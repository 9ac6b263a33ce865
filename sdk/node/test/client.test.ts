import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConciergeClient, ConciergeRequestError, signBody } from '../src/index.js';

const SECRET = `whsec_${Buffer.alloc(30, 5).toString('base64')}`;

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** A stand-in for the service on a real port: each request answered by the next scripted answer. */
let url: string;
let seen: Seen[] = [];
let script: ((res: ServerResponse) => void)[] = [];
const ok = (status: number, data: unknown) => (res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data, meta: {} }));
const error =
  (status: number, code: string, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify({ success: false, error: { code, message: `${code} happened` } }));
const cut = (res: ServerResponse) => res.socket?.destroy();
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  seen.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
  (script.shift() ?? ok(202, { turn_id: 't', status: 'acknowledged', duplicate: false }))(res);
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => void server.close());
const turn = () => ({ conversation_id: 'c', turn_id: 't', reply_url: `${url}/replies` });
const client = (retries: string[] = []) =>
  new ConciergeClient({
    secret: SECRET,
    apiKey: 'vak_test',
    baseUrl: `${url}/`,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    onRetry: (failure) => retries.push(failure.code),
  });
const fresh = (...answers: ((res: ServerResponse) => void)[]) => {
  seen = [];
  script = answers;
};

describe('ConciergeClient', () => {
  it('signs the exact bytes of a reply, and retries a 5xx, a cut connection and a 429 until it is taken', async () => {
    fresh(
      error(503, 'unavailable'),
      cut,
      error(429, 'rate_limited', { 'retry-after': '0' }),
      ok(202, { turn_id: 't', status: 'resolved', duplicate: false }),
    );
    const retries: string[] = [];
    const result = await client(retries).reply(turn(), 'Breakfast is at 7.', {
      actions: [{ type: 'quick_reply', label: 'Thanks', text: 'Thanks!' }],
    });
    expect(result).toEqual({ turn_id: 't', status: 'resolved', duplicate: false });
    expect(retries).toEqual(['unavailable', 'network', 'rate_limited']);
    expect(seen).toHaveLength(4);
    const body = {
      conversation_id: 'c',
      turn_id: 't',
      reply_text: 'Breakfast is at 7.',
      actions: [{ type: 'quick_reply', label: 'Thanks', text: 'Thanks!' }],
    };
    for (const request of seen) {
      expect(request.body).toEqual(body);
      expect(request.headers['x-service-signature']).toBe(signBody(SECRET, JSON.stringify(body)));
    }
  });

  it('takes a 200 duplicate as success, and retries "not acknowledged yet"', async () => {
    fresh(error(409, 'turn_not_acknowledged'), ok(200, { turn_id: 't', status: 'resolved', duplicate: true }));
    expect(await client().reply(turn(), 'Again')).toEqual({ turn_id: 't', status: 'resolved', duplicate: true });
    expect(seen).toHaveLength(2);
  });

  it("gives up at once on a final 409 or 4xx, saying the service's code", async () => {
    fresh(error(409, 'turn_not_pending'));
    const refused = await client()
      .reply(turn(), 'Late')
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConciergeRequestError);
    expect(refused).toMatchObject({ status: 409, code: 'turn_not_pending', message: 'turn_not_pending happened' });
    expect(seen).toHaveLength(1);
    fresh(error(400, 'invalid_request'));
    await expect(client().reply(turn(), 'x')).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('stops retrying after its attempts, with the last failure', async () => {
    fresh(...Array.from({ length: 8 }, () => error(502, 'bad_gateway')));
    await expect(client().reply(turn(), 'x')).rejects.toMatchObject({ status: 502, code: 'bad_gateway' });
    expect(seen).toHaveLength(8);
  });

  it('streams parts in order, splitting a chunk over 2,000 characters and skipping an empty one, then the whole reply', async () => {
    fresh();
    const long = '€'.repeat(2500);
    await client().stream(
      turn(),
      (async function* () {
        yield 'Hello ';
        yield '';
        yield long;
      })(),
    );
    expect(seen.map((s) => s.body)).toEqual([
      { conversation_id: 'c', turn_id: 't', part: 0, text: 'Hello ' },
      { conversation_id: 'c', turn_id: 't', part: 1, text: '€'.repeat(2000) },
      { conversation_id: 'c', turn_id: 't', part: 2, text: '€'.repeat(500) },
      { conversation_id: 'c', turn_id: 't', reply_text: `Hello ${long}` },
    ]);
  });

  it('abandons a stream on a final 409: the writer is closed and nothing more is posted', async () => {
    fresh(ok(202, {}), error(409, 'turn_not_pending'));
    let closed = false;
    const written = (async function* () {
      try {
        for (let i = 0; ; i++) yield `word ${i} `;
      } finally {
        closed = true;
      }
    })();
    await expect(client().stream(turn(), written)).rejects.toMatchObject({ code: 'turn_not_pending' });
    expect(closed).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it("makes the management calls with the API key, one Idempotency-Key across a call's retries", async () => {
    fresh(error(500, 'internal'), ok(200, { id: 'c', handler: 'person' }));
    expect(await client().takeover('c/1', 'Ana')).toEqual({ id: 'c', handler: 'person' });
    expect(seen.map((s) => [s.url, s.body, s.headers.authorization])).toEqual([
      ['/api/v1/conversations/c%2F1/takeover', { name: 'Ana' }, 'Bearer vak_test'],
      ['/api/v1/conversations/c%2F1/takeover', { name: 'Ana' }, 'Bearer vak_test'],
    ]);
    expect(seen[0]!.headers['idempotency-key']).toBe(seen[1]!.headers['idempotency-key']);
    fresh();
    await client().release('c');
    await client().personReply('c', 't', 'Yes');
    await client().message('c', { text: 'Hello', name: 'Ana' });
    expect(seen.map((s) => [s.url, s.body])).toEqual([
      ['/api/v1/conversations/c/release', {}],
      ['/api/v1/conversations/c/turns/t/reply', { reply_text: 'Yes' }],
      ['/api/v1/conversations/c/messages', { text: 'Hello', name: 'Ana' }],
    ]);
    expect(seen[0]!.headers['idempotency-key']).not.toBe(seen[1]!.headers['idempotency-key']);
  });
});
