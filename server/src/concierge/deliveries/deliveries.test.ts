import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type CustomerServer,
  deploy,
  type Deployed,
  headerOf,
  mintToken,
  startCustomerServer,
  Widget,
} from '../../../test/concierge-kit.js';
import {
  client,
  describeEachStore,
  expectError,
  type TestService,
  startService,
  waitFor,
} from '../../../test/harness.js';

/** The record of every call the service made to a customer's servers (README, The management API). */
describeEachStore('delivery records', (kind) => {
  let service: TestService;
  let customer: CustomerServer;
  let hotel: Deployed;
  let conversationId: string;
  /** A server that answers slowly, with a large body, or not at all, as a path asks. */
  let odd: Server;
  let oddBase: string;

  beforeAll(async () => {
    service = await startService(kind);
    customer = await startCustomerServer();
    odd = createServer((req, res) => {
      req.resume();
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(202).end(), 1_500);
      if (req.url === '/large') return res.writeHead(400, { 'content-type': 'text/plain' }).end(`${'é'.repeat(3000)}`);
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    oddBase = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    hotel = await deploy(service, { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl });
    customer.state.transcriptStatus = 503;
    const widget = await Widget.open(service, hotel.deploymentId);
    conversationId = (await widget.hello(await mintToken(hotel.secret, hotel.deploymentId))).conversation_id;
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Late checkout?', mode: 'text' });
    await widget.next('turn_acknowledged');
    widget.close();
    // The first transcript event failed once (503), then went through.
    await waitFor(async () => customer.transcript.length >= 1);
    customer.state.transcriptStatus = 200;
    await waitFor(
      async () =>
        (await hotel.api.get(`/api/v1/deliveries?kind=transcript&outcome=succeeded`)).body.meta.total_count >= 3,
      10_000,
    );
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
    await new Promise((resolve) => odd?.close(resolve));
  });

  it('records turn hook calls and transcript attempts, failed ones included, newest first, and filters them', async () => {
    const all = await hotel.api.get('/api/v1/deliveries?per_page=100');
    expect(all.status).toBe(200);
    const sentAt = all.body.data.map((d: { sent_at: string }) => d.sent_at);
    expect(sentAt).toEqual([...sentAt].sort().reverse());
    const hook = await hotel.api.get(`/api/v1/deliveries?kind=turn_hook&conversation_id=${conversationId}`);
    expect(hook.body.meta.total_count).toBe(1);
    expect(Object.keys(hook.body.data[0]).sort()).toEqual(
      [
        'attempt',
        'conversation_id',
        'deployment_id',
        'duration_ms',
        'error',
        'error_detail',
        'event_id',
        'event_type',
        'id',
        'kind',
        'model_usage',
        'outcome',
        'request',
        'response',
        'sent_at',
        'turn_id',
        'url',
      ].sort(),
    );
    expect(hook.body.data[0]).toMatchObject({
      kind: 'turn_hook',
      event_type: 'turn.created',
      event_id: null,
      deployment_id: hotel.deploymentId,
      attempt: 1,
      outcome: 'succeeded',
      error: null,
    });

    const failed = await hotel.api.get('/api/v1/deliveries?kind=transcript&outcome=failed');
    expect(failed.body.data.length).toBeGreaterThanOrEqual(1);
    const first = failed.body.data.at(-1);
    expect(first).toMatchObject({
      event_type: 'conversation.started',
      attempt: 1,
      outcome: 'failed',
      error: null,
      response: { status: 503, truncated: false },
      turn_id: null,
      conversation_id: conversationId,
    });
    expect(first.event_id).toMatch(/^evt_/);
    // The same event, sent again, succeeded as its next attempt.
    const retried = await hotel.api.get(`/api/v1/deliveries?event_type=conversation.started&outcome=succeeded`);
    expect(retried.body.data.find((d: { event_id: string }) => d.event_id === first.event_id)).toMatchObject({
      attempt: 2,
    });

    expect(
      (
        await hotel.api.get(
          `/api/v1/deliveries?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
        )
      ).body.data,
    ).toEqual([]);
    expect((await hotel.api.get(`/api/v1/deliveries?deployment_id=${hotel.deploymentId}`)).body.meta.total_count).toBe(
      all.body.meta.total_count,
    );
    for (const query of ['kind=webhook', 'outcome=ok', 'event_type=turn.deleted', 'since=today', 'conversation_id=7'])
      expectError(await hotel.api.get(`/api/v1/deliveries?${query}`), 400, 'invalid_request');

    const one = await hotel.api.get(`/api/v1/deliveries/${first.id}`);
    expect(one.body.data).toEqual(first);
  });

  it('redelivers a transcript event, dead ones included: the same body signed afresh, recorded as its next attempt', async () => {
    const [event] = (await hotel.api.get('/api/v1/deliveries?event_type=turn.acknowledged')).body.data;
    // It exhausted its retries: dead, and the conversation shows a failure.
    await service.app.store.db
      .updateTable('transcript_outbox')
      .set({ status: 'dead' })
      .where('id', '=', event.event_id)
      .execute();
    expect(
      (await hotel.api.get('/api/v1/conversations?has_failures=true')).body.data.map((c: { id: string }) => c.id),
    ).toEqual([conversationId]);

    const received = customer.transcript.length;
    const again = await hotel.api.post(`/api/v1/deliveries/${event.id}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({
      kind: 'transcript',
      event_id: event.event_id,
      attempt: event.attempt + 1,
      outcome: 'succeeded',
      conversation_id: conversationId,
    });
    expect(again.body.data.id).not.toBe(event.id);
    expect(again.body.data.request.body).toBe(event.request.body);
    const call = customer.transcript[received]!;
    expect(call.raw).toBe(event.request.body);
    expect(call.headers['webhook-id']).toBe(event.event_id);
    expect(new Webhook(hotel.secret).verify(call.raw, call.headers as Record<string, string>)).toEqual(
      JSON.parse(event.request.body),
    );
    // Delivered now: the conversation no longer shows a failure.
    expect((await hotel.api.get('/api/v1/conversations?has_failures=true')).body.data).toEqual([]);
    expect((await hotel.api.get(`/api/v1/deliveries/${again.body.data.id}`)).body.data).toEqual(again.body.data);

    const [hook] = (await hotel.api.get('/api/v1/deliveries?kind=turn_hook')).body.data;
    expectError(await hotel.api.post(`/api/v1/deliveries/${hook.id}/redeliver`), 409, 'invalid_state');
    expectError(await hotel.api.post(`/api/v1/deliveries/${crypto.randomUUID()}/redeliver`), 404, 'not_found');
  });

  it('sends a signed test to the hook or the transcript URL, marked test, with ids that match nothing, and records what came back', async () => {
    const calls = customer.calls.length;
    const tested = await hotel.api.post(`/api/v1/deployments/${hotel.deploymentId}/test-hook`);
    expect(tested.status).toBe(200);
    const delivery = tested.body.data;
    expect(delivery).toMatchObject({
      kind: 'test',
      event_type: 'turn.created',
      conversation_id: null,
      turn_id: null,
      url: customer.hookUrl,
      attempt: 1,
      outcome: 'succeeded',
      response: { status: 202 },
    });
    const call = customer.calls[calls]!;
    expect(call.raw).toBe(delivery.request.body);
    expect(call.body).toMatchObject({
      type: 'turn.created',
      test: true,
      deployment_id: hotel.deploymentId,
      reply_url: expect.stringMatching(new RegExp(`/embed/concierge/${hotel.deploymentId}/replies$`)),
    });
    expect(new Webhook(hotel.secret).verify(call.raw, call.headers as Record<string, string>)).toEqual(call.body);
    expect(new Webhook(hotel.secret).verify(delivery.request.body, delivery.request.headers)).toEqual(call.body);
    expect(headerOf(delivery.request.headers, 'x-service-delivery')).toBe(call.body.delivery_id);
    expect((await hotel.api.get(`/api/v1/conversations/${call.body.conversation_id}`)).status).toBe(404);

    const transcript = await hotel.api.post(`/api/v1/deployments/${hotel.deploymentId}/test-hook`, {
      target: 'transcript',
    });
    expect(transcript.body.data).toMatchObject({
      kind: 'test',
      event_type: 'conversation.started',
      url: customer.transcriptUrl,
      outcome: 'succeeded',
    });
    expect(JSON.parse(transcript.body.data.request.body)).toMatchObject({
      type: 'conversation.started',
      test: true,
      id: transcript.body.data.event_id,
    });
    expect((await hotel.api.get('/api/v1/deliveries?kind=test')).body.meta.total_count).toBe(2);

    expectError(
      await hotel.api.post(`/api/v1/deployments/${hotel.deploymentId}/test-hook`, { target: 'sms' }),
      400,
      'invalid_request',
    );
    expectError(
      await hotel.api.post(`/api/v1/deployments/${hotel.deploymentId}/test-hook`, { target: 'hook', extra: 1 }),
      400,
      'invalid_request',
    );
    expectError(await hotel.api.post(`/api/v1/deployments/${crypto.randomUUID()}/test-hook`), 404, 'not_found');
    const bare = await deploy(service, { hook_url: customer.hookUrl });
    expectError(
      await bare.api.post(`/api/v1/deployments/${bare.deploymentId}/test-hook`, { target: 'transcript' }),
      409,
      'invalid_state',
    );
    const [sample] = (await hotel.api.get('/api/v1/deliveries?kind=test')).body.data;
    expectError(await hotel.api.post(`/api/v1/deliveries/${sample.id}/redeliver`), 409, 'invalid_state');
  });

  it('records what went wrong: a timeout, a refused target, no listener, a long answer cut at 4 KiB', async () => {
    const { api, deploymentId } = await deploy(
      service,
      { hook_url: `${oddBase}/slow` },
      { runtime_config: { hook_timeout_ms: 500 } },
    );
    const test = async (hookUrl: string) => {
      expect(
        (await api.put(`/api/v1/deployments/${deploymentId}`, { channel_config: { hook_url: hookUrl } })).status,
      ).toBe(200);
      const reply = await api.post(`/api/v1/deployments/${deploymentId}/test-hook`);
      expect(reply.status).toBe(200);
      return reply.body.data;
    };
    expect(await test(`${oddBase}/slow`)).toMatchObject({ error: 'timeout', response: null, outcome: 'failed' });
    expect(await test('http://10.20.30.40/hook')).toMatchObject({
      error: 'egress_refused',
      response: null,
      outcome: 'failed',
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await test(`http://127.0.0.1:${port}/hook`)).toMatchObject({
      error: 'network',
      response: null,
      outcome: 'failed',
    });
    const large = await test(`${oddBase}/large`);
    expect(large).toMatchObject({ error: null, outcome: 'failed', response: { status: 400, truncated: true } });
    expect(Buffer.byteLength(large.response.body)).toBe(4096);
    expect(large.response.body).toBe('é'.repeat(2048));
  });

  it('takes at most 10 tests a minute per deployment, then 429 with Retry-After; other deployments are not held back', async () => {
    const { api, deploymentId } = await deploy(service, { hook_url: customer.hookUrl });
    // A burst wider than the limit: a test finishing while another is being counted must still count once.
    const replies = await Promise.all(
      Array.from({ length: 24 }, () => api.post(`/api/v1/deployments/${deploymentId}/test-hook`)),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(10).fill(200), ...Array(14).fill(429)]);
    const refused = replies.find((r) => r.status === 429)!;
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect((await hotel.api.post(`/api/v1/deployments/${hotel.deploymentId}/test-hook`)).status).toBe(200);
  });

  it('counts redeliveries with tests: 10 a minute per deployment together, then 429 for either', async () => {
    const own = await deploy(service, { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl });
    const widget = await Widget.open(service, own.deploymentId);
    await widget.hello(await mintToken(own.secret, own.deploymentId));
    widget.close();
    const event = await waitFor(
      async () => (await own.api.get('/api/v1/deliveries?kind=transcript&outcome=succeeded')).body.data[0],
    );
    for (let i = 0; i < 6; i++)
      expect((await own.api.post(`/api/v1/deployments/${own.deploymentId}/test-hook`)).status).toBe(200);
    const redeliveries = await Promise.all(
      Array.from({ length: 8 }, () => own.api.post(`/api/v1/deliveries/${event.id}/redeliver`)),
    );
    expect(redeliveries.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    const refused = redeliveries.find((r) => r.status === 429)!;
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectError(await own.api.post(`/api/v1/deployments/${own.deploymentId}/test-hook`), 429, 'rate_limited');
    // Another deployment of the same customer is not held back.
    expect((await hotel.api.post(`/api/v1/deliveries/${event.id}/redeliver`)).status).toBe(404);
  });

  it("keeps every customer's records to itself", async () => {
    const [mine] = (await hotel.api.get('/api/v1/deliveries')).body.data;
    const { apiKey } = await service.newCustomer('Another hotel');
    const stranger = client(service.url, apiKey);
    expectError(await stranger.get(`/api/v1/deliveries/${mine.id}`), 404, 'not_found');
    expectError(await stranger.post(`/api/v1/deliveries/${mine.id}/redeliver`), 404, 'not_found');
    expectError(await stranger.post(`/api/v1/deployments/${hotel.deploymentId}/test-hook`), 404, 'not_found');
    expect((await stranger.get(`/api/v1/deliveries?deployment_id=${hotel.deploymentId}`)).body).toMatchObject({
      data: [],
      meta: { total_count: 0 },
    });
  });
});
