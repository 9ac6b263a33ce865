import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type CustomerServer,
  deploy,
  type Deployed,
  mintToken,
  startCustomerServer,
  Widget,
} from '../../../test/concierge-kit.js';
import { describeEachStore, type StoreKind, startService, type TestService, waitFor } from '../../../test/harness.js';

const SENT = 20_000;
const WAITING = 20_000;

/**
 * One conversation's long backlog of transcript events (a flood of replies) must not hold up
 * anyone else's: finding each conversation's next event costs the same whatever its backlog.
 */
function suite(kind: StoreKind) {
  let service: TestService;
  let customer: CustomerServer;
  let hotel: Deployed;

  beforeAll(async () => {
    customer = await startCustomerServer();
    service = await startService(kind);
    hotel = await deploy(service, { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl });
    const widget = await Widget.open(service, hotel.deploymentId);
    const { conversation_id: flooded } = await widget.hello(
      await mintToken(hotel.secret, hotel.deploymentId, { sub: 'flooded' }),
    );
    widget.close();
    await waitFor(async () => customer.transcript.some((c) => c.body.conversation_id === flooded));
    // Where a flood leaves a conversation: many events delivered, as many still to go, all due.
    const db = service.app.store.db;
    const at = new Date(Date.now() - 60_000).toISOString();
    for (let offset = 0; offset < SENT + WAITING; offset += 1_000) {
      const rows = Array.from({ length: 1_000 }, (_, i) => {
        const n = offset + i;
        const delivered = n < SENT;
        const body = JSON.stringify({
          id: `evt_backlog${n}`,
          type: 'turn.created',
          created_at: at,
          deployment_id: hotel.deploymentId,
          conversation_id: flooded,
          data: { turn_id: `t${n}` },
        });
        return {
          id: `evt_backlog${n}`,
          deployment_id: hotel.deploymentId,
          conversation_id: flooded,
          position: 1_000_000 + n,
          body,
          status: delivered ? ('delivered' as const) : ('pending' as const),
          attempts: delivered ? 1 : 0,
          next_attempt_at: at,
          lease_expires_at: null,
          created_at: at,
          is_head: n === SENT ? (1 as const) : (0 as const),
        };
      });
      await db.insertInto('transcript_outbox').values(rows).execute();
    }
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await customer?.close();
  });

  it("delivers another conversation's events at once while one conversation's backlog drains in order", async () => {
    const widget = await Widget.open(service, hotel.deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(hotel.secret, hotel.deploymentId, { sub: 'calm' }));
    widget.close();
    await waitFor(
      async () => customer.transcript.some((c) => c.body.conversation_id === conversation_id),
      5_000,
      "the calm conversation's first event",
    );
    // The backlog goes on, oldest first.
    await waitFor(
      async () => customer.transcript.filter((c) => c.body.id?.startsWith('evt_backlog')).length >= 3,
      10_000,
      'the backlog to drain',
    );
    const drained = customer.transcript
      .filter((c) => c.body.id?.startsWith('evt_backlog'))
      .map((c) => Number(c.body.id.slice('evt_backlog'.length)));
    expect(drained.slice(0, 3)).toEqual([SENT, SENT + 1, SENT + 2]);
  }, 30_000);
}

describeEachStore('transcript delivery beside a long backlog', suite);
