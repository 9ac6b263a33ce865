import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import {
  type CustomerServer,
  deploy,
  type Deployed,
  mintToken,
  startCustomerServer,
  Widget,
} from '../../../test/concierge-kit.js';
import {
  describeEachStore,
  expectError,
  type StoreKind,
  startService,
  type TestService,
  waitFor,
} from '../../../test/harness.js';

/** README, Transcript events: a target that says it is gone, or fails for 72 h, is disabled; its events wait until it is enabled again. */
function suite(kind: StoreKind) {
  let service: TestService;
  let customer: CustomerServer;

  beforeAll(async () => {
    service = await startService(kind, { sessions: { sweepIntervalMs: 100 } });
  });
  afterAll(async () => {
    await service?.close();
  });
  // Each test has a customer of its own: what one tells its hook to do, or has called, is nobody else's.
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(() => customer.close());

  /** A conversation whose start and one turn make transcript events. */
  async function converse(hotel: Deployed, sub: string): Promise<string> {
    const widget = await Widget.open(service, hotel.deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(hotel.secret, hotel.deploymentId, { sub }));
    widget.send({ type: 'user_turn', client_turn_id: `${sub}-1`, text: 'Late checkout?', mode: 'text' });
    await widget.next('turn_acknowledged');
    widget.close();
    return conversation_id;
  }
  const received = (conversationId: string) =>
    customer.transcript.filter((c) => c.body.conversation_id === conversationId);

  it('stops at a 410 Gone at once: the target is disabled, events wait in order, and enabling it again delivers them', async () => {
    const hotel = await deploy(service, {
      hook_url: customer.hookUrl,
      transcript_hook_url: `${customer.transcriptUrl}/gone`,
    });
    customer.state.transcriptStatus = 410;
    const conversationId = await converse(hotel, 'gone');
    const disabled = await waitFor(async () => {
      const dep = (await hotel.api.get(`/api/v1/deployments/${hotel.deploymentId}`)).body.data;
      return dep.transcript_hook_status === 'disabled' && dep;
    });
    expect(disabled.transcript_hook_disabled_reason).toBe(`410 Gone from ${customer.transcriptUrl}/gone`);
    expect(disabled.transcript_hook_disabled_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // One attempt, then nothing more while disabled, whatever the retry delays would say.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(received(conversationId)).toHaveLength(1);
    const waiting = await service.app.store.db
      .selectFrom('transcript_outbox')
      .select('status')
      .where('conversation_id', '=', conversationId)
      .execute();
    expect(waiting.length).toBeGreaterThanOrEqual(3);
    expect(new Set(waiting.map((w) => w.status))).toEqual(new Set(['pending']));

    // The head backed off for an hour, as a long run of failures leaves it: enabling sends the waiting events now all the same.
    await service.app.store.db
      .updateTable('transcript_outbox')
      .set({ next_attempt_at: new Date(Date.now() + 3_600_000).toISOString() })
      .where('conversation_id', '=', conversationId)
      .where('is_head', '=', 1)
      .execute();
    customer.state.transcriptStatus = 200;
    const enabled = await hotel.api.post(`/api/v1/deployments/${hotel.deploymentId}/transcript-hook/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body.data).toMatchObject({
      transcript_hook_status: 'active',
      transcript_hook_disabled_at: null,
      transcript_hook_disabled_reason: null,
    });
    await waitFor(async () => received(conversationId).length >= waiting.length + 1, 5_000, 'the waiting events');
    const types = received(conversationId)
      .slice(1)
      .map((c) => c.body.type);
    expect(types.slice(0, 3)).toEqual(['conversation.started', 'turn.created', 'turn.acknowledged']);
    expect((await hotel.api.post(`/api/v1/deployments/${hotel.deploymentId}/transcript-hook/enable`)).status).toBe(200);
  });

  it('is enabled again by a new transcript_hook_url, and refuses to enable a deployment without one', async () => {
    const hotel = await deploy(service, {
      hook_url: customer.hookUrl,
      transcript_hook_url: `${customer.transcriptUrl}/old`,
    });
    await service.app.store.db
      .updateTable('deployments')
      .set({
        transcript_hook_status: 'disabled',
        transcript_hook_disabled_at: new Date().toISOString(),
        transcript_hook_disabled_reason: '410 Gone from old',
      })
      .where('id', '=', hotel.deploymentId)
      .execute();
    const same = await hotel.api.put(`/api/v1/deployments/${hotel.deploymentId}`, {
      runtime_config: { hook_timeout_ms: 4000 },
    });
    expect(same.body.data.transcript_hook_status).toBe('disabled');
    const moved = await hotel.api.put(`/api/v1/deployments/${hotel.deploymentId}`, {
      channel_config: { hook_url: customer.hookUrl, transcript_hook_url: `${customer.transcriptUrl}/new` },
    });
    expect(moved.body.data).toMatchObject({ transcript_hook_status: 'active', transcript_hook_disabled_reason: null });
    const bare = await deploy(service, { hook_url: customer.hookUrl });
    expectError(
      await bare.api.post(`/api/v1/deployments/${bare.deploymentId}/transcript-hook/enable`),
      409,
      'invalid_state',
    );
    expectError(
      await bare.api.post(`/api/v1/deployments/${crypto.randomUUID()}/transcript-hook/enable`),
      404,
      'not_found',
    );
    expectError(
      await bare.api.post(`/api/v1/deployments/${hotel.deploymentId}/transcript-hook/enable`),
      404,
      'not_found',
    );
  });

  it('retries for 72 h, then the event is dead and a target that failed all along is disabled', async () => {
    const hotel = await deploy(service, {
      hook_url: customer.hookUrl,
      transcript_hook_url: `${customer.transcriptUrl}/down`,
    });
    customer.state.transcriptStatus = 503;
    const conversationId = await converse(hotel, 'down');
    await waitFor(async () => received(conversationId).length >= 1);
    const db = service.app.store.db;
    // 71 h of failures: still retried.
    await db
      .updateTable('transcript_outbox')
      .set({
        created_at: new Date(Date.now() - 71 * 3_600_000).toISOString(),
        next_attempt_at: new Date().toISOString(),
      })
      .where('conversation_id', '=', conversationId)
      .execute();
    const head = () =>
      db
        .selectFrom('transcript_outbox')
        .select(['status', 'attempts'])
        .where('conversation_id', '=', conversationId)
        .orderBy('position')
        .executeTakeFirstOrThrow();
    await waitFor(async () => (await head()).attempts >= 2, 5_000, 'the second attempt to be settled');
    expect((await head()).status).toBe('pending');
    expect((await hotel.api.get(`/api/v1/deployments/${hotel.deploymentId}`)).body.data.transcript_hook_status).toBe(
      'active',
    );
    // Past 72 h: given up, and since nothing reached the target in that time, it is disabled.
    await db
      .updateTable('transcript_outbox')
      .set({
        created_at: new Date(Date.now() - 73 * 3_600_000).toISOString(),
        next_attempt_at: new Date().toISOString(),
      })
      .where('conversation_id', '=', conversationId)
      .execute();
    const dep = await waitFor(async () => {
      const data = (await hotel.api.get(`/api/v1/deployments/${hotel.deploymentId}`)).body.data;
      return data.transcript_hook_status === 'disabled' && data;
    });
    expect(dep.transcript_hook_disabled_reason).toBe(`every attempt to ${customer.transcriptUrl}/down failed for 72 h`);
    const statuses = await db
      .selectFrom('transcript_outbox')
      .select('status')
      .where('conversation_id', '=', conversationId)
      .orderBy('position')
      .execute();
    expect(statuses[0]!.status).toBe('dead');
    customer.state.transcriptStatus = 200;
  }, 20_000);
}

describeEachStore('a transcript target that goes away', suite);
