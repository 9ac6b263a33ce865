import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deploy, mintToken, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import { type TestService, startService, waitFor } from '../../../test/harness.js';
import { retryDelayMs } from './transcript.outbox.js';

describe('transcript retry delays', () => {
  it('double from 1 s, each ±20% at random, capped at an hour', () => {
    for (const [attempts, base] of [
      [1, 1_000],
      [3, 4_000],
      [20, 3_600_000],
    ] as const) {
      const delays = Array.from({ length: 200 }, () => retryDelayMs(attempts));
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(base * 0.8);
      expect(Math.max(...delays)).toBeLessThanOrEqual(base * 1.2);
      expect(new Set(delays).size).toBeGreaterThan(100);
    }
  });

  it("take the receiver's Retry-After on 429 and 503, in seconds or as a date, up to an hour", () => {
    const answer = (status: number, retryAfter: string) => ({
      status,
      headers: { 'retry-after': retryAfter },
      body: '',
      bytes: 0,
    });
    expect(retryDelayMs(1, answer(503, '7'))).toBe(7_000);
    expect(retryDelayMs(5, answer(429, '0'))).toBe(0);
    expect(retryDelayMs(1, answer(429, '99999'))).toBe(3_600_000);
    expect(retryDelayMs(1, answer(503, new Date(Date.now() + 30_000).toUTCString()))).toBeGreaterThan(28_000);
    // Elsewhere, or unreadable, it is the usual backoff.
    expect(retryDelayMs(1, answer(500, '60'))).toBeLessThanOrEqual(1_200);
    expect(retryDelayMs(1, answer(503, 'soon'))).toBeLessThanOrEqual(1_200);
  });
});

describe('transcript delivery, against a receiver that pushes back', () => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  beforeAll(async () => {
    service = await startService('sqlite', { sessions: { sweepIntervalMs: 100 } });
  });
  afterAll(async () => {
    await service.close();
  });
  // Each test has a customer of its own: what one tells its hook to do, or has called, is nobody else's.
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(() => customer.close());

  it('waits as long as Retry-After says, and sends each attempt to the URL the deployment has then', async () => {
    customer.state.transcriptStatus = 503;
    customer.state.transcriptHeaders = { 'retry-after': '2' };
    const { api, deploymentId, secret } = await deploy(service, {
      hook_url: customer.hookUrl,
      transcript_hook_url: customer.transcriptUrl,
    });
    const widget = await Widget.open(service, deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(secret, deploymentId));
    const ours = () => customer.transcript.filter((c) => c.body.conversation_id === conversation_id);
    const first = await waitFor(async () => ours()[0]);

    // Told to come back in 2 s, the service does not try again after its own 1 s.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ours()).toHaveLength(1);
    const second = await waitFor(async () => ours()[1], 3_000);
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_900);

    // The customer moves its receiver: the next attempt goes to the new address.
    const moved = `${customer.transcriptUrl}-v2`;
    expect(
      (
        await api.put(`/api/v1/deployments/${deploymentId}`, {
          channel_config: { hook_url: customer.hookUrl, transcript_hook_url: moved },
        })
      ).status,
    ).toBe(200);
    customer.state.transcriptStatus = 200;
    customer.state.transcriptHeaders = {};
    const third = await waitFor(async () => ours()[2], 4_000);
    expect([first.url, second.url, third.url]).toEqual(['/transcript', '/transcript', '/transcript-v2']);
    expect(third.body.id).toBe(first.body.id);
    widget.close();
  }, 15_000);
});
