import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../../server/test/harness.js';
import { ApiError, api, curlOf, path, query, sentLog, whenSignedOut } from './api';
import { auditOf } from '../../server/src/audit/audit-trail.js';

describe('the console API client, against a real service', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startService('sqlite');
    // The client resolves paths against the page's origin: here, the service's.
    (globalThis as unknown as { location?: URL }).location = new URL(service.url);
  });
  afterAll(async () => {
    await service?.close();
    delete (globalThis as unknown as { location?: URL }).location;
  });

  it('turns an error envelope into an ApiError with status, code, message and request id, and reports a lost session', async () => {
    let signedOut = 0;
    whenSignedOut(() => signedOut++);
    const error = await api('GET', path`/api/v1/agents`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect((error as ApiError).requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(signedOut).toBe(1);
    const signIn = await api('POST', path`/console/session`, { email: 'x@example.com', password: '' }).catch(
      (e: unknown) => e,
    );
    expect(signIn).toMatchObject({ status: 400, code: 'invalid_request', details: [{ path: 'password' }] });
    // A refused sign-in is not a lost session.
    expect(signedOut).toBe(1);
    expect(sentLog[0]).toMatchObject({ method: 'POST', path: '/console/session', status: 400 });
    // The password never enters the log the curl drawer shows.
    expect(sentLog[0]).not.toHaveProperty('body');
    expect(sentLog[0]!.ms).toBeGreaterThanOrEqual(0);
  });

  it('signs in with a welcome link and reads data with the console header', async () => {
    const { customerId } = await service.newCustomer('Harbor Hotel');
    const { token } = await service.app.consoleAccounts.invite(customerId, 'ana@example.com', {
      audit: auditOf(customerId, 'admin'),
    });
    // Node's fetch keeps no cookies: the welcome's answer is checked, then the cookie is sent by hand.
    const res = await fetch(`${service.url}/console/welcome`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, password: 'correct horse battery' }),
    });
    expect(res.status).toBe(204);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const original = globalThis.fetch;
    globalThis.fetch = (input, init) =>
      original(input, { ...init, headers: { ...(init?.headers as Record<string, string>), cookie } });
    try {
      const agents = await api<unknown[], { total_count: number }>(
        'GET',
        path`/api/v1/agents${query({ search: '', status: undefined, page: 1 })}`,
      );
      expect(agents).toEqual({
        success: true,
        data: [],
        meta: { page: 1, per_page: 20, total_count: 0, total_pages: 0 },
      });
    } finally {
      globalThis.fetch = original;
    }
  });

  it('writes each request as curl with the key as a placeholder, quoting the body for a shell', () => {
    expect(curlOf('POST', '/api/v1/agents', { name: "Harbor's desk" }, 'https://svc.example')).toBe(
      [
        `curl -X POST 'https://svc.example/api/v1/agents'`,
        `-H "Authorization: Bearer $CONCIERGE_API_KEY"`,
        `-H 'Content-Type: application/json'`,
        `-d '{"name":"Harbor'\\''s desk"}'`,
      ].join(' \\\n  '),
    );
    expect(curlOf('GET', '/api/v1/agents', undefined, 'https://svc.example')).toBe(
      `curl -X GET 'https://svc.example/api/v1/agents' \\\n  -H "Authorization: Bearer $CONCIERGE_API_KEY"`,
    );
    // An upload is the file's name as curl's -F, its bytes never kept.
    expect(
      curlOf('POST', '/api/v1/knowledge-bases/k/documents', undefined, 'https://svc.example', "Spa's menu.pdf"),
    ).toBe(
      [
        `curl -X POST 'https://svc.example/api/v1/knowledge-bases/k/documents'`,
        `-H "Authorization: Bearer $CONCIERGE_API_KEY"`,
        `-F 'file=@Spa'\\''s menu.pdf'`,
      ].join(' \\\n  '),
    );
    expect(query({ a: '', b: undefined, c: 0, d: 'x y' }).text).toBe('?c=0&d=x+y');
  });

  it('builds a path only from ids and a query: a value read from the address cannot name another route', async () => {
    const id = '0b9f6a4e-3c1d-4e2a-9f7b-1a2b3c4d5e6f';
    expect(path`/api/v1/agents/${id}/publish`).toBe(`/api/v1/agents/${id}/publish`);
    expect(path`/api/v1/deliveries${query({ conversation_id: id, per_page: 100 })}`).toBe(
      `/api/v1/deliveries?conversation_id=${id}&per_page=100`,
    );
    for (const crafted of [
      '../settings/api-key/rotate?',
      '..%2Fsettings',
      '',
      'abc',
      `${id}/../../settings`,
      `${id}?`,
      '.',
    ]) {
      expect(() => path`/api/v1/deployments/${crafted}/preview-token`, crafted).toThrow(ApiError);
    }
    // A query is taken only at the end of a path.
    expect(() => path`/api/v1/agents/${query({ a: 1 })}/publish`).toThrow(ApiError);
    // A path written with dot segments never leaves either.
    const sent = sentLog.length;
    const refused = await api(
      'POST',
      '/api/v1/deployments/../settings/api-key/rotate' as Parameters<typeof api>[1],
    ).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 0, code: 'invalid_id' });
    expect(sentLog.length).toBe(sent + 1);
    expect(sentLog[0]).toMatchObject({ status: 0 });
  });
});
