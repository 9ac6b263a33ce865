import { afterAll, beforeAll, expect, it } from 'vitest';
import { sign } from '../../test/concierge-kit.js';
import {
  type Client,
  client,
  createReadyAgent,
  deepJson,
  describeEachStore,
  expectError,
  type Reply,
  type TestService,
  startService,
} from '../../test/harness.js';

const NUL = 'must not contain the character U+0000';
const SURROGATE = 'must not contain an unpaired UTF-16 surrogate';
const TOO_DEEP = 'nested deeper than 32 levels';

/** The text hygiene of README, The management API on every route, whatever the store would do with the input. */
describeEachStore('text hygiene at the HTTP edge', (kind) => {
  let service: TestService;
  let api: Client;
  let agentId: string;
  let deployment: { id: string; signing_secret: string };

  beforeAll(async () => {
    service = await startService(kind);
    api = client(service.url, (await service.newCustomer()).apiKey);
    agentId = await createReadyAgent(api);
    deployment = (
      await api.post('/api/v1/deployments', {
        agent_id: agentId,
        channel_config: { hook_url: 'https://hotel.example/hook' },
      })
    ).body.data;
  });
  afterAll(() => service.close());

  const refused = (reply: Reply, path: string, message: string) => {
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.error.details).toEqual([{ path, message }]);
  };
  const json = { 'content-type': 'application/json' };

  it('refuses U+0000 and unpaired surrogates in bodies, keys and queries with 400, and stores nothing', async () => {
    const before = (await api.get('/api/v1/agents')).body.meta.total_count;
    refused(await api.post('/api/v1/agents', { name: 'Front\u0000desk' }), 'body.name', NUL);
    refused(
      await api.post('/api/v1/agents', undefined, {
        raw: '{"name":"Desk","description":"half \\ud800 a pair"}',
        headers: json,
      }),
      'body.description',
      SURROGATE,
    );
    refused(
      await api.post('/api/v1/agents', undefined, { raw: '{"name":"Desk","\\u0000":1}', headers: json }),
      'body.\u0000',
      NUL,
    );
    refused(await api.get('/api/v1/agents?search=%00'), 'query.search', NUL);
    refused(await api.get('/api/v1/agents?search=ok&status=%00'), 'query.status', NUL);
    refused(
      await api.put(`/api/v1/agents/${agentId}`, { draft_spec: { greeting: ['fine', 'not\u0000fine'] } }),
      'body.draft_spec.greeting.1',
      NUL,
    );
    refused(
      await api.put(`/api/v1/deployments/${deployment.id}`, { channel_config: { widget: { title: 'Hotel\u0000' } } }),
      'body.channel_config.widget.title',
      NUL,
    );
    expect((await api.get('/api/v1/agents')).body.meta.total_count).toBe(before);
    // A well-formed pair of surrogates (an emoji) is ordinary text.
    const emoji = await api.post('/api/v1/agents', { name: 'Desk \ud83d\udece\ufe0f' });
    expect(emoji.status).toBe(202);
    expect((await api.get(`/api/v1/agents/${emoji.body.data.agent_id}`)).body.data.name).toBe(
      'Desk \ud83d\udece\ufe0f',
    );
  });

  it('refuses a body that is not valid UTF-8 with 400 invalid_json on every kind of JSON route, and stores nothing', async () => {
    const before = (await api.get('/api/v1/agents')).body.meta.total_count;
    // An encoded surrogate (ED A0 80), an overlong "/" (C0 AF), a lone continuation byte, a cut-off sequence.
    for (const bad of [[0xed, 0xa0, 0x80], [0xc0, 0xaf], [0x80], [0xe2, 0x82]]) {
      const raw = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from(bad), Buffer.from('b"}')]);
      expectError(await api.post('/api/v1/agents', undefined, { raw, headers: json }), 400, 'invalid_json');
      expectError(await api.put(`/api/v1/agents/${agentId}`, undefined, { raw, headers: json }), 400, 'invalid_json');
      expectError(
        await client(service.url).post('/console/session', undefined, { raw, headers: json }),
        400,
        'invalid_json',
      );
      const reply = Buffer.concat([
        Buffer.from(
          '{"conversation_id":"00000000-0000-4000-8000-000000000000","turn_id":"00000000-0000-4000-8000-000000000001","reply_text":"a',
        ),
        Buffer.from(bad),
        Buffer.from('"}'),
      ]);
      const signed = await fetch(`${service.url}/embed/concierge/${deployment.id}/replies`, {
        method: 'POST',
        headers: { ...json, 'x-service-signature': sign(deployment.signing_secret, reply) },
        body: new Uint8Array(reply),
      });
      expect([signed.status, ((await signed.json()) as any).error.code]).toEqual([400, 'invalid_json']);
    }
    expect((await api.get('/api/v1/agents')).body.meta.total_count).toBe(before);
  });

  it('refuses JSON nested deeper than 32 levels before anything serialises it', async () => {
    const deep = `{"draft_spec":${deepJson(5_000)}}`;
    refused(
      await api.put(`/api/v1/agents/${agentId}`, undefined, { raw: deep, headers: json }),
      `body.draft_spec${'.a'.repeat(31)}`,
      TOO_DEEP,
    );
    const deepChannel = `{"agent_id":"${agentId}","channel_config":{"hook_url":"https://hotel.example/hook","x":${deepJson(5_000)}}}`;
    refused(
      await api.post('/api/v1/deployments', undefined, { raw: deepChannel, headers: json }),
      `body.channel_config.x${'.a'.repeat(30)}`,
      TOO_DEEP,
    );
    // 32 levels, the body itself counted, are allowed.
    const edge = await api.put(`/api/v1/agents/${agentId}`, undefined, {
      raw: `{"draft_spec":${deepJson(31)}}`,
      headers: json,
    });
    expect(edge.status).toBe(200);
  });

  it('refuses U+0000 in a signed deferred reply with 400, after the signature check', async () => {
    const body = JSON.stringify({
      conversation_id: '00000000-0000-4000-8000-000000000000',
      turn_id: '00000000-0000-4000-8000-000000000001',
      reply_text: 'Breakfast\u0000',
    });
    const post = (signature: string) =>
      fetch(`${service.url}/embed/concierge/${deployment.id}/replies`, {
        method: 'POST',
        headers: { ...json, 'x-service-signature': signature },
        body,
      }).then(async (res) => ({
        status: res.status,
        headers: res.headers,
        body: (await res.json()) as any,
      }));
    expectError(await post(sign('whsec_wrong', body)), 401, 'invalid_signature');
    refused(await post(sign(deployment.signing_secret, body)), 'body.reply_text', NUL);
  });
});
