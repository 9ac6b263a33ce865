import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, startCustomerServer, Widget } from '../../test/concierge-kit.js';
import { describeEachStore, startService, type TestService, waitFor } from '../../test/harness.js';

const TOKEN = 'metrics-token-for-tests-0123456789';

describeEachStore('GET /metrics', (kind) => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;

  beforeAll(async () => {
    service = await startService(kind, { env: { METRICS_TOKEN: TOKEN } });
  });
  afterAll(() => service.close());
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(() => customer.close());

  const scrape = async () => {
    const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return Object.fromEntries(parsePrometheusTextFormat(await res.text()).map((f) => [f.name, f]));
  };
  /** A family's sample value for these labels (a histogram's count). */
  const valueOf = async (name: string, labels: Record<string, string> = {}) => {
    const family = (await scrape())[name];
    if (!family) throw new Error(`no family ${name}`);
    const sample = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    return Number(sample ? (sample.count ?? sample.value) : 0);
  };

  it('refuses a missing or wrong token with 401, and is plain text for the right one', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${TOKEN}`]) {
      const res = await fetch(`${service.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    const families = await scrape();
    for (const name of [
      'concierge_http_requests_total',
      'concierge_http_request_duration_seconds',
      'concierge_open_sockets',
      'concierge_open_conversations',
      'concierge_turns_total',
      'concierge_hook_call_duration_seconds',
      'concierge_reply_latency_seconds',
      'concierge_transcript_outbox_backlog',
      'concierge_transcript_outbox_oldest_age_seconds',
      'concierge_store_up',
      'concierge_nodejs_eventloop_lag_seconds',
      'concierge_process_cpu_seconds_total',
      'concierge_process_resident_memory_bytes',
    ]) {
      expect(families[name], name).toBeDefined();
    }
    expect(families.concierge_store_up!.metrics[0]!.value).toBe('1');
  });

  it('moves each family when its event happens: requests by route template, sockets, conversations, turns, hook calls, replies, the outbox', async () => {
    customer.state.behaviour = (_c, res) => res.writeHead(202).end();
    customer.state.transcriptStatus = 503;
    const before = {
      requests: await valueOf('concierge_http_requests_total', { route: '/api/v1/conversations/:id', method: 'GET', status: '404' }),
      accepted: await valueOf('concierge_turns_total', { outcome: 'accepted' }),
      resolved: await valueOf('concierge_turns_total', { outcome: 'resolved' }),
      hooks: await valueOf('concierge_hook_call_duration_seconds'),
      replies: await valueOf('concierge_reply_latency_seconds'),
      conversations: await valueOf('concierge_open_conversations'),
      backlog: await valueOf('concierge_transcript_outbox_backlog'),
    };
    const { api, deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl });
    // An id in the path is no label: the route's template is.
    for (const id of ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']) expect((await api.get(`/api/v1/conversations/${id}`)).status).toBe(404);
    expect(await valueOf('concierge_http_requests_total', { route: '/api/v1/conversations/:id', method: 'GET', status: '404' })).toBe(before.requests + 2);

    const widget = await Widget.open(service, deploymentId);
    const ready = await widget.hello(await mintToken(secret, deploymentId));
    expect(await valueOf('concierge_open_sockets')).toBeGreaterThanOrEqual(1);
    expect(await valueOf('concierge_open_conversations')).toBe(before.conversations + 1);
    widget.send({ type: 'user_turn', client_turn_id: 'm1', text: 'Metrics?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    await postReply(service, deploymentId, { conversation_id: ready.conversation_id, turn_id, reply_text: 'Counted.' }, secret);
    await widget.next('reply');
    expect(await valueOf('concierge_turns_total', { outcome: 'accepted' })).toBe(before.accepted + 1);
    expect(await valueOf('concierge_turns_total', { outcome: 'resolved' })).toBe(before.resolved + 1);
    expect(await valueOf('concierge_hook_call_duration_seconds')).toBe(before.hooks + 1);
    expect(await valueOf('concierge_reply_latency_seconds')).toBe(before.replies + 1);
    // The transcript target answers 503: its events wait in the outbox.
    await waitFor(async () => (await valueOf('concierge_transcript_outbox_backlog')) > before.backlog);
    expect(await valueOf('concierge_transcript_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    widget.close();
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  it('does not exist', async () => {
    const service = await startService('sqlite');
    try {
      const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(404);
    } finally {
      await service.close();
    }
  });
});
