import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deploy, mintToken, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import { describeEachStore, type TestService, startService } from '../../../test/harness.js';
import { appendEvents } from '../events/event.repository.js';

const EVENTS = 700;
/** 9,000 characters of reply, 27 KB of UTF-8: a page of 500 such events is far more than a socket's buffers. */
const TEXT = '\u20ac'.repeat(9_000);

/** README, Concierge sessions: the server's own replay is paced by the socket's drain. */
describeEachStore('replaying a long history', (kind) => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  let history: { deploymentId: string; conversationId: string; token: string };

  beforeAll(async () => {
    service = await startService(kind, { sessions: { drainTimeoutMs: 1_000 } });
    customer = await startCustomerServer();
    const { deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    const token = await mintToken(secret, deploymentId);
    const widget = await Widget.open(service, deploymentId);
    const { conversation_id: conversationId } = await widget.hello(token);
    widget.close();
    // About 18 MB of stored replies, written straight to the store: the history of a long conversation.
    for (let from = 0; from < EVENTS; from += 100) {
      const events = Array.from({ length: 100 }, () => ({
        type: 'reply' as const,
        turn_id: randomUUID(),
        text: TEXT,
        actions: [],
      }));
      await service.app.store.db.transaction().execute((trx) => appendEvents(trx, conversationId, events));
    }
    history = { deploymentId, conversationId, token };
  }, 60_000);
  afterAll(async () => {
    await service.close();
    await customer.close();
  });

  it('sends ~18 MB of history to a reader that keeps up, in order, on one connection', async () => {
    const reader = await Widget.open(service, history.deploymentId);
    const ready = await reader.hello(history.token, { conversation_id: history.conversationId, last_seq: 0 });
    expect(ready.last_seq).toBe(EVENTS);
    const deadline = Date.now() + 20_000;
    while (reader.frames.length < EVENTS + 1 && Date.now() < deadline && reader.ws.readyState === reader.ws.OPEN)
      await new Promise((r) => setTimeout(r, 50));
    expect(reader.ws.readyState).toBe(reader.ws.OPEN);
    const seqs = reader.frames.filter((f) => f.type === 'reply').map((f) => f.seq);
    expect(seqs).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
    reader.close();
  }, 30_000);

  it('still drops a peer that does not read at all', async () => {
    const stuck = await Widget.open(service, history.deploymentId);
    stuck.ws.on('error', () => {});
    stuck.send({ type: 'hello', token: history.token, conversation_id: history.conversationId, last_seq: 0 });
    const socket = (stuck.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    // The kernel's buffers fill, the replay waits for a drain that never comes, and gives up after 1 s.
    await new Promise((r) => setTimeout(r, 3_000));
    socket.resume();
    expect((await stuck.closed).code).toBe(1006);
    expect(stuck.frames.length).toBeLessThan(EVENTS);
  }, 30_000);
});
