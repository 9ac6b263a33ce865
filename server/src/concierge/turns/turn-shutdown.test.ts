import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CustomerServer, deploy, mintToken, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import { client, TEST_DATABASE_URL, type TestService, startService, waitFor } from '../../../test/harness.js';

// PostgreSQL: another transaction holding the conversation's row keeps a turn on its way into the store for as long as the test wants.
describe.skipIf(!TEST_DATABASE_URL)('a stop while a turn is being taken [postgres]', () => {
  let service: TestService;
  let customer: CustomerServer;
  beforeAll(async () => {
    service = await startService('postgres');
    customer = await startCustomerServer();
  });
  afterAll(async () => {
    await customer.close();
    await service.close();
  });

  it('waits for the turn still being stored and calls its hook before stopping: it is not left pending', async () => {
    const { apiKey, deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    const widget = await Widget.open(service, deploymentId);
    const ready = await widget.hello(await mintToken(secret, deploymentId));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const locked = new Promise<void>((resolve) => (holding = resolve));
    const holder = service.app.store.db.transaction().execute(async (trx) => {
      await sql`update conversations set updated_at = updated_at where id = ${ready.conversation_id}`.execute(trx);
      holding();
      await held;
    });
    await locked;
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Last orders?', mode: 'text' });
    // The turn waits on the row; the stop begins meanwhile and the row is let go while it runs.
    await new Promise((r) => setTimeout(r, 200));
    const restarted = service.restart();
    await new Promise((r) => setTimeout(r, 200));
    release();
    await holder;
    service = await restarted;

    const conversation = (await client(service.url, apiKey).get(`/api/v1/conversations/${ready.conversation_id}`)).body
      .data;
    expect(conversation.turns.map((t: { status: string }) => t.status)).toEqual(['acknowledged']);
    await waitFor(async () => customer.calls.length === 1);
  });
});
