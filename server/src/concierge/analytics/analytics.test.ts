import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import { describeEachStore, expectError, startService, type TestService } from '../../../test/harness.js';
import { binOf, middleOf, percentilesOf } from './latency-bins.js';
import { addTally, emptyRollupRows } from './analytics.rollup.js';

describe('latency percentiles from bins', () => {
  const binsOf = (values: number[]) =>
    values.reduce((bins, v) => bins.set(binOf(v), (bins.get(binOf(v)) ?? 0) + 1), new Map<number, number>());
  const within5 = (got: number | null, exact: number) =>
    expect(Math.abs(got! - exact) / exact, `${got} for ${exact}`).toBeLessThanOrEqual(0.05);

  it('are within 5% of the exact nearest-rank values of a known distribution', () => {
    const uniform = Array.from({ length: 1000 }, (_, i) => i + 1);
    const uniformP = percentilesOf(binsOf(uniform));
    expect(uniformP.count).toBe(1000);
    within5(uniformP.p50, 500);
    within5(uniformP.p95, 950);
    // A long tail: 90 fast answers, 10 slow ones.
    const tailed = [...Array.from({ length: 90 }, () => 120), ...Array.from({ length: 10 }, () => 30_000)];
    const tailedP = percentilesOf(binsOf(tailed));
    within5(tailedP.p50, 120);
    within5(tailedP.p95, 30_000);
  });

  it('are null without a measurement, and bins grow in order', () => {
    expect(percentilesOf(new Map())).toEqual({ p50: null, p95: null, count: 0 });
    expect([binOf(0), binOf(0.5), middleOf(0)]).toEqual([0, 0, 0]);
    for (let ms = 1; ms < 1e7; ms *= 1.7) expect(binOf(ms * 1.7)).toBeGreaterThanOrEqual(binOf(ms));
  });
});

describe('the rollup of a unit of work', () => {
  const dep = { id: 'dep-1', customerId: 'cus-1', agentId: 'agt-1' };
  const at = '2026-11-29T10:15:00.000Z';

  it("writes an hour's row only for a tally that moves one of its counts", () => {
    const rows = emptyRollupRows();
    // A reply: its latency, none of the hour's counts.
    addTally(rows, dep, { at, resolvedAfterMs: 820, firstPartAfterMs: undefined });
    // Feedback given again unchanged.
    addTally(rows, dep, { at, feedback: { rating: 'up', previous: 'up' } });
    expect(rows.hours.size).toBe(0);
    expect([...rows.latency.values()]).toEqual([
      {
        metric: 'reply',
        bin: binOf(820),
        count: 1,
        deployment_id: 'dep-1',
        hour: '2026-11-29T10:00:00.000Z',
        customer_id: 'cus-1',
        agent_id: 'agt-1',
      },
    ]);
    addTally(rows, dep, { at, turns: 1, failed: ['hook_failed'], redactions: { phone: 2 } });
    expect([...rows.hours.values()]).toEqual([
      expect.objectContaining({
        turns: 1,
        failed_hook_failed: 1,
        redacted_phone: 2,
        conversations: 0,
        hour: '2026-11-29T10:00:00.000Z',
      }),
    ]);
  });
});

describeEachStore('GET /api/v1/analytics', (kind) => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;

  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(() => service.close());
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(() => customer.close());

  const today = () => new Date().toISOString().slice(0, 10);
  const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

  it("counts conversations, visitors, turns, failures by reason, handoffs, feedback and latencies, per UTC day and hour, for the customer's own deployments only", async () => {
    const { api, deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    let answer = 202;
    customer.state.behaviour = (_c, res) => res.writeHead(answer).end();
    const visit = async (sub: string) => {
      const widget = await Widget.open(service, deploymentId);
      const ready = await widget.hello(await mintToken(secret, deploymentId, { sub }));
      return { widget, ready };
    };
    const ask = async (v: Awaited<ReturnType<typeof visit>>, id: string) => {
      v.widget.send({ type: 'user_turn', client_turn_id: id, text: `Question ${id}`, mode: 'text' });
      return (await v.widget.next('turn_accepted')).turn_id as string;
    };
    const ada = await visit('ada');
    const first = await ask(ada, 'a1');
    await ada.widget.next('turn_acknowledged');
    await postReply(
      service,
      deploymentId,
      { conversation_id: ada.ready.conversation_id, turn_id: first, reply_text: 'One.' },
      secret,
    );
    await ada.widget.next('reply');
    ada.widget.send({ type: 'feedback', turn_id: first, rating: 'up' });
    await ada.widget.next('feedback_recorded');
    ada.widget.send({ type: 'feedback', turn_id: first, rating: 'down' });
    await ada.widget.next('feedback_recorded');
    answer = 400;
    await ask(ada, 'a2');
    await ada.widget.next('turn_failed');
    answer = 202;
    const again = await visit('ada');
    const bob = await visit('bob');
    const second = await ask(bob, 'b1');
    await bob.widget.next('turn_acknowledged');
    await postReply(
      service,
      deploymentId,
      { conversation_id: bob.ready.conversation_id, turn_id: second, reply_text: 'Two.' },
      secret,
    );
    await bob.widget.next('reply');
    expect(
      (await api.post(`/api/v1/conversations/${bob.ready.conversation_id}/takeover`, { name: 'Maria' })).status,
    ).toBe(200);
    for (const v of [ada, again, bob]) v.widget.close();

    const daily = await api.get(`/api/v1/analytics?from=${today()}&to=${tomorrow()}`);
    expect(daily.status).toBe(200);
    const totals = {
      conversations: 3,
      visitors: 2,
      turns: 3,
      turns_failed: { hook_rejected: 1, hook_failed: 0, reply_timeout: 0, conversation_ended: 0, model_failed: 0 },
      handoffs: 1,
      feedback_up: 0,
      feedback_down: 1,
      redactions: { email: 0, phone: 0, card: 0, iban: 0, name: 0, address: 0 },
      guardrails: { refuse: 0, retry: 0, hand_off: 0, flagged: 0 },
      hook_latency_ms: { p50: expect.any(Number), p95: expect.any(Number), count: 3 },
      time_to_reply_ms: { p50: expect.any(Number), p95: expect.any(Number), count: 2 },
      time_to_first_part_ms: { p50: null, p95: null, count: 0 },
      recognition_ms: { p50: null, p95: null, count: 0 },
      voice_to_voice_ms: { p50: null, p95: null, count: 0 },
      proactive: [],
    };
    expect(daily.body.data).toEqual({
      interval: 'day',
      from: `${today()}T00:00:00.000Z`,
      to: `${tomorrow()}T00:00:00.000Z`,
      buckets: [{ start: `${today()}T00:00:00.000Z`, ...totals }],
      totals,
      // No agent here asks for analysis (quality.test.ts counts criteria).
      criteria: [],
    });

    const hourly = await api.get(
      `/api/v1/analytics?from=${today()}&to=${tomorrow()}&interval=hour&deployment_id=${deploymentId}`,
    );
    expect(hourly.body.data.buckets).toHaveLength(24);
    const busy = hourly.body.data.buckets.filter((b: { turns: number }) => b.turns > 0);
    expect(busy.map((b: { start: string }) => b.start)).toEqual([
      `${new Date().toISOString().slice(0, 13)}:00:00.000Z`,
    ]);
    expect(hourly.body.data.totals).toEqual(totals);

    // Another customer sees none of it, and may not name this deployment.
    const other = await deploy(service, { hook_url: customer.hookUrl });
    const theirs = await other.api.get(`/api/v1/analytics?from=${today()}&to=${tomorrow()}`);
    expect(theirs.body.data.totals).toMatchObject({ conversations: 0, visitors: 0, turns: 0, handoffs: 0 });
    expectError(
      await other.api.get(`/api/v1/analytics?from=${today()}&to=${tomorrow()}&deployment_id=${deploymentId}`),
      404,
      'not_found',
    );
  });

  it('refuses a range that is empty, longer than 92 days or not on its interval’s edges, naming the field', async () => {
    const { api } = await deploy(service, { hook_url: customer.hookUrl });
    const cases: [string, string, string][] = [
      ['from=2026-11-02&to=2026-11-01', 'to', 'must be after from'],
      ['from=2026-01-01&to=2026-06-01', 'to', 'must be at most 92 days after from'],
      [
        'from=2026-11-01T10:30:00Z&to=2026-11-02&interval=hour',
        'from',
        'must be at the start of an hour (UTC) for interval=hour',
      ],
      ['from=2026-11-01T10:00:00Z&to=2026-11-02', 'from', 'must be at the start of a day (UTC) for interval=day'],
      ['from=2026-11-01&to=2026-11-02&interval=week', 'interval', expect.any(String) as unknown as string],
    ];
    for (const [query, path, message] of cases) {
      const res = await api.get(`/api/v1/analytics?${query}`);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details, query).toContainEqual(expect.objectContaining({ path, message }));
    }
    // 92 days of hours is the most there is: 2,208 buckets.
    const longest = await api.get('/api/v1/analytics?from=2026-01-01&to=2026-04-03&interval=hour');
    expect(longest.body.data.buckets).toHaveLength(2208);
  });
});
