import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  type Client,
  client,
  describeEachStore,
  expectError,
  rawExchange,
  type TestService,
  startService,
} from '../../test/harness.js';

/** Sends bytes on a raw socket and returns the status line and body: for requests fetch won't make. */
const rawRequest = async (url: string, request: string): Promise<string> => (await rawExchange(url, request)).answer;

describeEachStore('HTTP edge', (kind) => {
  let service: TestService;
  let api: Client;
  let apiKey: string;
  beforeAll(async () => {
    service = await startService(kind);
    apiKey = (await service.newCustomer()).apiKey;
    api = client(service.url, apiKey);
  });
  afterAll(() => service.close());

  describe('request ids', () => {
    it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
      const echoed = await api.get('/api/v1/agents', { headers: { 'x-request-id': 'trace-123.abc:9' } });
      expect(echoed.headers.get('x-request-id')).toBe('trace-123.abc:9');
      const replaced = await api.get('/api/v1/agents/nope', { headers: { 'x-request-id': 'bad id\twith spaces' } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(replaced.body.meta.request_id).toBe(replaced.headers.get('x-request-id'));
      const fresh = await call(service.url, 'GET', '/healthz');
      expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('bodies', () => {
    it('answers 400 invalid_json for a body that does not parse', async () => {
      for (const raw of ['{"name":', 'not json', '{"name":"a",}', '\u0000']) {
        expectError(
          await api.post('/api/v1/agents', undefined, { raw, headers: { 'content-type': 'application/json' } }),
          400,
          'invalid_json',
        );
      }
    });

    it('answers 415 for a body that is not application/json, on POST and PUT', async () => {
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/jsonp',
        'multipart/form-data; boundary=x',
      ]) {
        expectError(
          await api.post('/api/v1/agents', undefined, { raw: '{"name":"a"}', headers: { 'content-type': type } }),
          415,
          'unsupported_media_type',
        );
      }
      expectError(await api.post('/api/v1/agents', undefined, { raw: '{"name":"a"}' }), 415, 'unsupported_media_type');
      expectError(
        await api.put('/api/v1/agents/00000000-0000-4000-8000-000000000000', undefined, {
          raw: 'name=a',
          headers: { 'content-type': 'text/plain' },
        }),
        415,
        'unsupported_media_type',
      );
    });

    it('accepts application/json with parameters and any case', async () => {
      const res = await api.post('/api/v1/agents', undefined, {
        raw: '{"name":"Typed"}',
        headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      });
      expect(res.status).toBe(202);
    });

    it('answers 413 for a body over 1 MiB, declared or streamed, and keeps serving', async () => {
      const big = JSON.stringify({ name: 'x', description: 'y'.repeat(1024 * 1024) });
      const res = await api.post('/api/v1/agents', undefined, {
        raw: big,
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 413, 'payload_too_large');

      const chunks = async function* () {
        yield new TextEncoder().encode('{"name":"x","description":"');
        for (let i = 0; i < 20; i++) yield new TextEncoder().encode('z'.repeat(64 * 1024));
        yield new TextEncoder().encode('"}');
      };
      const streamed = await fetch(`${service.url}/api/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: ReadableStream.from(chunks()),
        duplex: 'half',
      } as RequestInit);
      expect(streamed.status).toBe(413);
      expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
      expect((await api.get('/api/v1/agents')).status).toBe(200);
    });

    it('accepts {} on body-less POSTs but refuses a non-empty body there', async () => {
      const unknown = '/api/v1/deployments/00000000-0000-4000-8000-000000000000/activate';
      // {} passes body validation, so the request reaches the handler and its 404.
      expectError(await api.post(unknown, {}), 404, 'not_found');
      // Anything in the body is refused before the handler runs.
      const refused = await api.post(unknown, { force: true });
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error.details[0].path).toBe('body');
    });
  });

  describe('routes', () => {
    it('answers 404 not_found in the envelope for unknown routes, with and without a key', async () => {
      expectError(await api.get('/api/v1/nothing-here'), 404, 'not_found');
      expectError(await call(service.url, 'GET', '/nothing'), 404, 'not_found');
      expectError(await api.del('/api/v1/agents'), 404, 'not_found');
      // Without a key nothing under /api/v1 is revealed, existing or not.
      expectError(await call(service.url, 'GET', '/api/v1/nothing-here'), 401, 'unauthorized');
    });

    it('serves healthz and readyz', async () => {
      expect((await call(service.url, 'GET', '/healthz')).body).toEqual({
        success: true,
        data: { status: 'ok' },
        meta: {},
      });
      expect((await call(service.url, 'GET', '/readyz')).body).toEqual({
        success: true,
        data: { status: 'ok' },
        meta: {},
      });
    });

    it('rejects a management key on nothing but /api/v1 and never crashes on garbage', async () => {
      const replies = await Promise.all([
        rawRequest(
          service.url,
          'GET /api/v1/agents/%ZZ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ' +
            apiKey +
            '\r\nConnection: close\r\n\r\n',
        ),
        rawRequest(
          service.url,
          'POST /api/v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ' +
            apiKey +
            '\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{"a"}',
        ),
        rawRequest(service.url, 'BREW /coffee HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        rawRequest(service.url, 'complete nonsense\r\n\r\n'),
      ]);
      expect(replies[0]).toMatch(/^HTTP\/1\.1 404/);
      expect(replies[1]).toMatch(/^HTTP\/1\.1 400/);
      expect(replies[1]).toContain('"invalid_json"');
      expect(replies[2]).toMatch(/^HTTP\/1\.1 (404|400|501)/);
      expect(replies[3]).toMatch(/^HTTP\/1\.1 400/);
      expect((await call(service.url, 'GET', '/healthz')).status).toBe(200);
    });

    it("takes a body the client cut off as the client's doing: no error logged, and serving goes on", async () => {
      const errorsBefore = service.logs.filter((l) => l.includes('"level":50')).length;
      for (const path of ['/api/v1/agents', '/embed/concierge/00000000-0000-4000-8000-000000000000/replies']) {
        const request = `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`;
        await rawExchange(service.url, request, { waitMs: 50 });
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(service.logs.filter((l) => l.includes('"level":50')).slice(errorsBefore)).toEqual([]);
      expect((await api.get('/api/v1/agents')).status).toBe(200);
    });

    it('marks every management response no-store, secrets and errors included', async () => {
      const created = await api.post('/api/v1/agents', { name: 'Cached?' });
      const responses = [
        await api.get('/api/v1/agents'),
        created,
        await api.get('/api/v1/settings/api-key'),
        await api.get('/api/v1/nothing-here'),
        await call(service.url, 'GET', '/api/v1/agents'),
        await api.post('/api/v1/deployments', { agent_id: created.body.data.agent_id }),
      ];
      for (const res of responses)
        expect([res.status, res.headers.get('cache-control')]).toEqual([res.status, 'no-store']);
      const deployment = responses[5]!.body.data;
      expect(deployment.signing_secret).toMatch(/^whsec_/);
      const rotated = await api.post(`/api/v1/deployments/${deployment.id}/rotate-secret`, { grace_period_s: 0 });
      expect([rotated.status, rotated.headers.get('cache-control')]).toEqual([200, 'no-store']);
    });

    it("logs a request's route and the names of its query parameters, never their values (a search is a visitor's words)", async () => {
      const created = await api.post('/api/v1/agents', { name: 'Logged' });
      await api.get('/api/v1/conversations?search=secretword&status=open');
      await api.get(`/api/v1/agents/${created.body.data.agent_id}?page=7&page=again`);
      await api.get('/console/nowhere?token=hiddenvalue');
      const logs = service.logs.join('');
      expect(logs).toContain('"method":"GET","route":"/api/v1/conversations","query":["search","status"],"status":200');
      expect(logs).toContain('"method":"GET","route":"/api/v1/agents/:id","query":["page"],"status":');
      expect(logs).toContain('"method":"GET","path":"/console/nowhere","query":["token"],"status":404');
      for (const value of ['secretword', 'again', 'hiddenvalue', created.body.data.agent_id])
        expect(logs).not.toContain(value);
    });

    it('never writes keys, secrets or the Authorization header to the logs', async () => {
      const created = await api.post('/api/v1/deployments', { agent_id: '00000000-0000-4000-8000-000000000000' });
      expect(created.status).toBe(404);
      const rotated = (await api.post('/api/v1/settings/api-key/rotate', { grace_period_s: 60 })).body.data.key;
      await client(service.url, rotated).get('/api/v1/agents');
      const logs = service.logs.join('');
      expect(logs).toContain('"route":"/api/v1/agents","status":200');
      expect(logs).not.toContain(apiKey);
      expect(logs).not.toContain(rotated);
      expect(logs.toLowerCase()).not.toContain('bearer');
    });
  });
});

describe('errors never leak internals', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService('sqlite');
  });
  afterAll(() => service.close());

  it('turns a store failure into 500 internal_error without stack or SQL, logged with the request id', async () => {
    const { apiKey } = await service.newCustomer();
    const api = client(service.url, apiKey);
    await service.app.store.db.schema.dropTable('deployments').execute();
    const res = await api.get('/api/v1/deployments', { headers: { 'x-request-id': 'boom-1' } });
    expectError(res, 500, 'internal_error');
    expect(res.body.error.message).toBe('Internal error');
    expect(JSON.stringify(res.body)).not.toMatch(/select|deployments|at .*\.ts/i);
    expect(service.logs.some((l) => l.includes('"request_id":"boom-1"') && l.includes('unhandled error'))).toBe(true);
    expect((await api.get('/api/v1/agents')).status).toBe(200);
  });
});
