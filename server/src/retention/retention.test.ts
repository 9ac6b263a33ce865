import { expect, it } from 'vitest';
import { deploy, mintToken, serviceWithCustomer, Widget } from '../../test/concierge-kit.js';
import { describeEachStore, waitFor } from '../../test/harness.js';
import { createLogger } from '../logger.js';
import { isoIn } from '../shared/time.js';
import { StoreHealth } from '../store/store-health.js';
import { RetentionPurge } from './retention.purge.js';
import { insertAuditEntry } from '../audit/audit.repository.js';

describeEachStore('retention', (kind) => {
  const suite = serviceWithCustomer(kind);

  const db = () => suite.service().app.store.db;
  const purge = (days: { conversationDays: number; deliveryDays: number }) =>
    new RetentionPurge(
      { db: db(), health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }), dialect: kind },
      { ...days, batch: 2 },
    ).purge();
  const count = async (
    table: 'conversations' | 'turns' | 'conversation_events' | 'transcript_outbox' | 'deliveries',
    column: 'id' | 'conversation_id',
    ids: string[],
  ) =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where(column, 'in', ids)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('purges ended conversations past their days with all they hold, delivered events and loose delivery records past theirs; open conversations stay, however old', async () => {
    suite.customer().state.behaviour = (_call, res) => res.writeHead(202).end();
    const { api, deploymentId, secret } = await deploy(suite.service(), {
      hook_url: suite.customer().hookUrl,
      transcript_hook_url: suite.customer().transcriptUrl,
    });
    /** A conversation with one turn; ended unless asked to stay open. */
    const conversation = async (sub: string, end: boolean) => {
      const widget = await Widget.open(suite.service(), deploymentId);
      const ready = await widget.hello(await mintToken(secret, deploymentId, { sub }));
      widget.send({ type: 'user_turn', client_turn_id: `${sub}-1`, text: 'How long do you keep this?', mode: 'text' });
      await widget.next('turn_acknowledged');
      if (end) {
        widget.send({ type: 'end' });
        await widget.next('conversation_ended');
      }
      widget.close();
      return ready.conversation_id as string;
    };
    const old = [
      await conversation('old-1', true),
      await conversation('old-2', true),
      await conversation('old-3', true),
    ];
    const recent = await conversation('recent', true);
    const openForAges = await conversation('open', false);
    const all = [...old, recent, openForAges];
    await waitFor(
      async () =>
        (
          await db()
            .selectFrom('transcript_outbox')
            .select('id')
            .where('conversation_id', 'in', all)
            .where('status', '!=', 'delivered')
            .execute()
        ).length === 0 || undefined,
    );
    const recentEvents = await count('transcript_outbox', 'conversation_id', [recent]);
    const oldTest = (await api.post(`/api/v1/deployments/${deploymentId}/test-hook`)).body.data.id;
    const newTest = (await api.post(`/api/v1/deployments/${deploymentId}/test-hook`)).body.data.id;
    expect(await count('deliveries', 'conversation_id', old)).toBeGreaterThan(0);

    // Age the rows: the old conversations and the open one were last changed 40 days ago, and the
    // recent conversation's transcript events were delivered as long ago.
    const longAgo = isoIn(-40 * 86_400_000);
    await db()
      .updateTable('conversations')
      .set({ updated_at: longAgo })
      .where('id', 'in', [...old, openForAges])
      .execute();
    await db()
      .updateTable('transcript_outbox')
      .set({ created_at: longAgo })
      .where('conversation_id', '=', recent)
      .execute();
    // A test of the hook sent as long ago, and the delivery records of the recent conversation too (they go with it, not by age).
    await db()
      .updateTable('deliveries')
      .set({ sent_at: longAgo })
      .where((eb) => eb.or([eb('id', '=', oldTest), eb('conversation_id', '=', recent)]))
      .execute();

    expect(await purge({ conversationDays: 0, deliveryDays: 0 })).toEqual({
      conversations: 0,
      events: 0,
      deliveries: 0,
      audit: 0,
    });
    expect(await count('conversations', 'id', all)).toBe(5);

    const purged = await purge({ conversationDays: 30, deliveryDays: 30 });
    expect(purged.conversations).toBe(3);
    expect(purged.deliveries).toBe(1);
    expect(await count('deliveries', 'id', [oldTest, newTest])).toBe(1);
    expect(await count('deliveries', 'id', [newTest])).toBe(1);
    expect(await count('deliveries', 'conversation_id', [recent])).toBeGreaterThan(0);
    expect(purged.events).toBeGreaterThanOrEqual(recentEvents);
    expect(await count('conversations', 'id', old)).toBe(0);
    for (const table of ['turns', 'conversation_events', 'transcript_outbox', 'deliveries'] as const)
      expect(await count(table, 'conversation_id', old)).toBe(0);
    expect(await count('conversations', 'id', [recent, openForAges])).toBe(2);
    expect(await count('turns', 'conversation_id', [recent, openForAges])).toBe(2);
    expect(await count('transcript_outbox', 'conversation_id', [recent])).toBe(0);
    expect(await count('transcript_outbox', 'conversation_id', [openForAges])).toBeGreaterThan(0);

    // The open conversation is still usable.
    const back = await Widget.open(suite.service(), deploymentId);
    const resumed = await back.hello(await mintToken(secret, deploymentId, { sub: 'open' }), {
      conversation_id: openForAges,
      last_seq: 0,
    });
    expect(resumed).toMatchObject({ type: 'ready', resumed: true });
    back.close();
  });
});

describeEachStore('audit retention', (kind) => {
  const suite = serviceWithCustomer(kind);

  it('purges audit records past AUDIT_RETENTION_DAYS and keeps the rest; 0 keeps them all', async () => {
    const { db } = suite.service().app.store;
    const customerId = 'audit-retention';
    const record = (id: string, at: string) =>
      insertAuditEntry(db, {
        id,
        customer_id: customerId,
        at,
        actor_type: 'service',
        actor_id: null,
        actor_email: null,
        action: 'deployment.transcript_hook_disabled',
        detail: null,
        target_type: 'deployment',
        target_id: null,
        changes: '[]',
        ip: null,
        user_agent: null,
        request_id: null,
      });
    for (let i = 0; i < 5; i++) await record(`00000000-0000-4000-8000-00000000000${i}`, isoIn(-(400 + i) * 86_400_000));
    await record('00000000-0000-4000-8000-000000000010', isoIn(-364 * 86_400_000));
    const purge = (auditDays: number) =>
      new RetentionPurge(
        { db, health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }), dialect: kind },
        { conversationDays: 0, deliveryDays: 0, auditDays, batch: 2 },
      ).purge();
    const kept = async () => (await db.selectFrom('audit_log').select('id').execute()).length;
    const before = await kept();
    expect((await purge(0)).audit).toBe(0);
    expect((await purge(365)).audit).toBe(5);
    expect(await kept()).toBe(before - 5);
    expect(
      await db.selectFrom('audit_log').select('id').where('id', '=', '00000000-0000-4000-8000-000000000010').execute(),
    ).toHaveLength(1);
  });
});
