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
      // prom-client's defaults under their standard names, where stock dashboards look for them.
      'nodejs_eventloop_lag_seconds',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(families[name], name).toBeDefined();
    }
    expect(
      Object.keys(families).filter(
        (name) => name.startsWith('concierge_process_') || name.startsWith('concierge_nodejs_'),
      ),
    ).toEqual([]);
    expect(families.concierge_store_up!.metrics[0]!.value).toBe('1');
  });

  it('moves each family when its event happens: requests by route template, sockets, conversations, turns, hook calls, replies, the outbox', async () => {
    customer.state.behaviour = (_c, res) => res.writeHead(202).end();
    customer.state.transcriptStatus = 503;
    const before = {
      requests: await valueOf('concierge_http_requests_total', {
        route: '/api/v1/conversations/:id',
        method: 'GET',
        status: '404',
      }),
      accepted: await valueOf('concierge_turns_total', { outcome: 'accepted' }),
      resolved: await valueOf('concierge_turns_total', { outcome: 'resolved' }),
      hooks: await valueOf('concierge_hook_call_duration_seconds'),
      replies: await valueOf('concierge_reply_latency_seconds'),
      conversations: await valueOf('concierge_open_conversations'),
      backlog: await valueOf('concierge_transcript_outbox_backlog'),
    };
    const { api, deploymentId, secret } = await deploy(service, {
      hook_url: customer.hookUrl,
      transcript_hook_url: customer.transcriptUrl,
    });
    // An id in the path is no label: the route's template is.
    for (const id of ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'])
      expect((await api.get(`/api/v1/conversations/${id}`)).status).toBe(404);
    expect(
      await valueOf('concierge_http_requests_total', {
        route: '/api/v1/conversations/:id',
        method: 'GET',
        status: '404',
      }),
    ).toBe(before.requests + 2);
    // The duration histogram is labelled by status too: the 404s are apart from the 200s. (The parser drops a histogram's labels, so the text is read.)
    const text = await (
      await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(text).toContain(
      `concierge_http_request_duration_seconds_count{route="/api/v1/conversations/:id",method="GET",status="404"} ${before.requests + 2}\n`,
    );

    const widget = await Widget.open(service, deploymentId);
    const ready = await widget.hello(await mintToken(secret, deploymentId));
    expect(await valueOf('concierge_open_sockets')).toBeGreaterThanOrEqual(1);
    expect(await valueOf('concierge_open_conversations')).toBe(before.conversations + 1);
    widget.send({ type: 'user_turn', client_turn_id: 'm1', text: 'Metrics?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    await postReply(
      service,
      deploymentId,
      { conversation_id: ready.conversation_id, turn_id, reply_text: 'Counted.' },
      secret,
    );
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

  // Last in this block: it leaves this address blocked for wrong tokens (the right one is never limited).
  it('slows wrong tokens down per address: past 10 in a minute each is 429 with Retry-After, and the right token still scrapes', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 14; i++) {
      const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer guess-${i}` } });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
      } else await res.body?.cancel();
    }
    // The first test of this block spent 3 of the 10.
    expect(statuses).toEqual([...Array(7).fill(401), ...Array(7).fill(429)]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    await scrape();
  });
});

describe('METRICS_TOKEN', () => {
  it('is refused at start when shorter than 32 characters', async () => {
    await expect(startService('sqlite', { env: { METRICS_TOKEN: 'short-token-0123456789' } })).rejects.toThrow(
      'METRICS_TOKEN: must be at least 32 characters',
    );
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
