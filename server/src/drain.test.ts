import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, type ServiceRef, startCustomerServer, Widget } from '../test/concierge-kit.js';
import { call, client, waitFor } from '../test/harness.js';
import { processSandbox } from '../test/process-sandbox.js';
import { bootstrapKey, type NodeProcess, startServiceProcess } from '../test/service-process.js';

/** SIGTERM as a rolling restart sends it: README, Running several nodes. */
describe('the drain on SIGTERM', () => {
  const sandbox = processSandbox('concierge-drain');
  const { running } = sandbox;

  const start = async (drainS: string, store = mkdtempSync(join(sandbox.root, 'store-'))) => {
    const node = await startServiceProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: store,
      DATABASE_URL: '',
      LOG_LEVEL: 'warn',
      HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
      DRAIN_S: drainS,
    });
    running.push(node);
    return node;
  };
  const ref = (node: NodeProcess, key: string): ServiceRef => ({
    url: node.url,
    newCustomer: async () => ({ customerId: '', apiKey: key }),
  });

  it('answers 503 on /readyz at once, keeps serving for DRAIN_S, closes sockets with 1001, finishes the hook call in flight and exits 0', async () => {
    const customer = await startCustomerServer();
    try {
      const store = mkdtempSync(join(sandbox.root, 'store-'));
      const node = await start('2', store);
      const key = await bootstrapKey(node);
      const { deploymentId, secret } = await deploy(ref(node, key), { hook_url: customer.hookUrl });
      const token = await mintToken(secret, deploymentId);
      const widget = await Widget.open(node, deploymentId);
      const ready = await widget.hello(token);
      expect((await call(node.url, 'GET', '/readyz')).status).toBe(200);

      const signalled = Date.now();
      node.child.kill('SIGTERM');
      const draining = await waitFor(
        async () => {
          const res = await call(node.url, 'GET', '/readyz');
          return res.status === 503 && res;
        },
        1_000,
        '/readyz to turn 503',
      );
      expect(draining.body).toEqual({
        success: false,
        error: { code: 'unavailable', message: 'The node is draining before it stops' },
        meta: { request_id: expect.any(String) },
      });
      expect(Date.now() - signalled).toBeLessThan(1_000);
      expect((await call(node.url, 'GET', '/healthz')).status).toBe(200);

      // Everything already here is still served while the balancer moves new work away: a turn,
      // its reply posted to this node, a management request. The hook holds its answer past the
      // end of the drain, so the call is in flight when the sockets close.
      customer.state.behaviour = (_c, res) => void setTimeout(() => res.writeHead(202).end(), 3_000);
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Late checkout?', mode: 'text' });
      const accepted = await widget.next('turn_accepted');
      expect((await client(node.url, key).get('/api/v1/agents')).status).toBe(200);

      const closed = await widget.closed;
      expect(closed.code).toBe(1001);
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(2_000);
      expect(await node.exited).toBe(0);
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(3_000);

      // The hook call in flight was finished, not cut off: the turn was acknowledged, not failed.
      const after = await start('0', store);
      const history = await client(after.url, key).get(`/api/v1/conversations/${ready.conversation_id}`);
      expect(history.body.data.turns.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([
        [accepted.turn_id, 'acknowledged'],
      ]);
      const reply = await postReply(
        after,
        deploymentId,
        { conversation_id: ready.conversation_id, turn_id: accepted.turn_id, reply_text: 'Until 2 pm.' },
        secret,
      );
      expect(reply.status).toBe(202);
      after.child.kill('SIGTERM');
      expect(await after.exited).toBe(0);
    } finally {
      await customer.close();
    }
  }, 30_000);

  it('ends live activity streams when the drain starts, and a stop closes what remains after its deadline', async () => {
    const node = await start('2');
    const key = await bootstrapKey(node);
    // One reader that reads (a console), one that never reads what it is sent, and a request that never sends its body.
    const stream = await fetch(`${node.url}/api/v1/activity`, { headers: { authorization: `Bearer ${key}` } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return Date.now();
    })();
    const stuck = connect(Number(new URL(node.url).port), '127.0.0.1');
    stuck.on('error', () => {});
    stuck.write(
      `POST /api/v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    await new Promise((r) => setTimeout(r, 200));

    const signalled = Date.now();
    node.child.kill('SIGTERM');
    // The stream ends as the drain starts: its client reconnects, through the balancer, to a node that stays.
    expect((await ended) - signalled).toBeLessThan(1_000);
    expect(await node.exited).toBe(0);
    // DRAIN_S=2, then at most 5 s for what is still in flight.
    expect(Date.now() - signalled).toBeLessThan(9_000);
    stuck.destroy();
  }, 30_000);

  it('answers a reader that reconnects at once over its kept-alive connection with that connection’s last response, so it holds no stop until the deadline', async () => {
    const node = await start('0');
    const key = await bootstrapKey(node);
    // An EventSource, or a console left open: as soon as a stream ends it asks again, on the same connection.
    const closing: string[] = [];
    let stopping = false;
    const reader = (async () => {
      while (node.child.exitCode === null)
        try {
          const res = await fetch(`${node.url}/api/v1/activity`, { headers: { authorization: `Bearer ${key}` } });
          if (stopping) closing.push(res.headers.get('connection') ?? '');
          for await (const _ of res.body!) void _;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const signalled = Date.now();
    stopping = true;
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
    // Without it, the reader came back to the stopping node ~50 times and held it the whole 5 s deadline.
    expect(Date.now() - signalled).toBeLessThan(2_500);
    await reader;
    // It did ask again over its kept-alive connection while the node stopped, and was told that was the last.
    expect(closing.length).toBeGreaterThan(0);
    expect(closing.every((value) => value === 'close')).toBe(true);
  }, 30_000);

  it('ends the drain at a second signal, and SIGINT stops without one', async () => {
    const node = await start('60');
    node.child.kill('SIGTERM');
    await waitFor(async () => (await call(node.url, 'GET', '/readyz')).status === 503, 1_000, '/readyz to turn 503');
    const signalled = Date.now();
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(3_000);

    const interrupted = await start('60');
    const at = Date.now();
    interrupted.child.kill('SIGINT');
    expect(await interrupted.exited).toBe(0);
    expect(Date.now() - at).toBeLessThan(3_000);
  }, 30_000);
});
