import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  deploy,
  deployAgent,
  type HookCall,
  mintToken,
  startCustomerServer,
  Widget,
} from '../../../test/concierge-kit.js';
import { send, startModelServer, streamOf } from '../../../test/model-server.js';
import { client, TEST_DATABASE_URL, waitFor } from '../../../test/harness.js';
import { processSandbox } from '../../../test/process-sandbox.js';
import {
  bootstrapKey,
  loopbackNodes,
  type NodeProcess,
  nodeRef,
  withScratchDatabase,
} from '../../../test/service-process.js';

/**
 * README, Running several nodes: a node killed between a hook call's start and its answer. The
 * call is made again, with the same delivery_id, by a node that is alive.
 */
describe('a node killed in the middle of a hook call', () => {
  const sandbox = processSandbox('concierge-takeover');
  const { running } = sandbox;

  const start = loopbackNodes(running);
  const ref = nodeRef;

  /** Kills `first` (mid-answer), and waits for `survivor()` to resolve the conversation's turn: within 15 s. */
  async function killedThenAnswered(
    first: NodeProcess,
    key: string,
    conversationId: string,
    survivor: () => Promise<NodeProcess>,
  ) {
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await first.exited;
    const node = await survivor();
    const turn = await waitFor(
      async () => {
        const detail = await client(node.url, key).get(`/api/v1/conversations/${conversationId}`);
        const found = detail.body.data?.turns?.[0];
        return found?.status === 'resolved' && found;
      },
      15_000,
      'the turn answered by a live node',
    );
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    return { node, turn };
  }

  /** Takes a turn on `first`, kills it while its hook call waits, and shows `survivor()` answering it within 15 s. */
  async function killedMidCall(first: NodeProcess, key: string, survivor: () => Promise<NodeProcess>) {
    // The first call is held unanswered; any later one is answered at once.
    const customer = await startCustomerServer((call: HookCall, res) => {
      if (customer.calls.indexOf(call) > 0)
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reply_text: 'Until 2 pm.' }));
    });
    try {
      const { deploymentId, secret } = await deploy(ref(first, key), { hook_url: customer.hookUrl });
      const token = await mintToken(secret, deploymentId);
      const widget = await Widget.open(first, deploymentId);
      const ready = await widget.hello(token);
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Late checkout?', mode: 'text' });
      const accepted = await widget.next('turn_accepted');
      await waitFor(async () => customer.calls.length === 1, 5_000, 'the hook call');

      const { node, turn } = await killedThenAnswered(first, key, ready.conversation_id, survivor);
      expect(turn).toMatchObject({ id: accepted.turn_id, status: 'resolved', reply_text: 'Until 2 pm.' });
      // The same delivery, twice: the customer's deduplication holds.
      expect(customer.calls).toHaveLength(2);
      const [killed, again] = customer.calls as [HookCall, HookCall];
      expect(again.body.delivery_id).toBe(killed.body.delivery_id);
      expect(again.headers['webhook-id']).toBe(killed.headers['webhook-id']);
      // The same call but for its send time (and, with no PUBLIC_BASE_URL here, each node's own reply_url).
      const same = (body: Record<string, unknown>) => ({ ...body, sent_at: undefined, reply_url: undefined });
      expect(same(again.body)).toEqual(same(killed.body));

      // The visitor's widget resumes on the live node and gets the reply.
      const back = await Widget.open(node, deploymentId);
      await back.hello(token, { conversation_id: ready.conversation_id, last_seq: accepted.seq });
      expect(await back.next('reply')).toMatchObject({ turn_id: accepted.turn_id, text: 'Until 2 pm.' });
      back.close();
    } finally {
      await customer.close();
    }
  }

  it('SQLite: the next start of the node calls the hook again', async () => {
    const env = { DATA_DIR: join(sandbox.root, 'sqlite'), DATABASE_URL: '' };
    const first = await start(env);
    await killedMidCall(first, await bootstrapKey(first), () => start(env));
  }, 40_000);

  it.skipIf(!TEST_DATABASE_URL)(
    'PostgreSQL: another node, alive all along, calls the hook again',
    async () => {
      await withScratchDatabase(TEST_DATABASE_URL!, 'concierge_takeover', async (databaseUrl) => {
        const env = { DATA_DIR: join(sandbox.root, 'pg'), DATABASE_URL: databaseUrl };
        const first = await start(env);
        const key = await bootstrapKey(first);
        const second = await start(env);
        await killedMidCall(first, key, async () => second);
      });
    },
    40_000,
  );

  /** Takes a turn of a model agent on `first`, kills it while its model is writing, and shows `survivor()` answering it once, within 15 s. */
  async function killedMidModel(first: NodeProcess, key: string, survivor: () => Promise<NodeProcess>) {
    // The first call says one sentence and never finishes; any later one answers at once.
    const model = await startModelServer((call, res) => {
      if (model.calls.indexOf(call) > 0) return send(res, streamOf(call.body.model, 'Checkout is until 2 pm.'));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(streamOf(call.body.model, 'Let me see. ', { done: false }).join(''));
    });
    try {
      const api = client(first.url, key);
      const endpoint = await api.post('/api/v1/model-endpoints', { name: 'M', base_url: model.baseUrl });
      const agent = await deployAgent(ref(first, key), api, {
        responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: 'm' },
      });
      const token = await mintToken(agent.secret, agent.deploymentId);
      const widget = await Widget.open(first, agent.deploymentId);
      const ready = await widget.hello(token);
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Late checkout?', mode: 'text' });
      const accepted = await widget.next('turn_accepted');
      await widget.next('reply_part', 5_000);

      const { node, turn } = await killedThenAnswered(first, key, ready.conversation_id, survivor);
      expect(turn).toMatchObject({ id: accepted.turn_id, status: 'resolved', reply_text: 'Checkout is until 2 pm.' });
      expect(model.calls).toHaveLength(2);
      const back = await Widget.open(node, agent.deploymentId);
      await back.hello(token, { conversation_id: ready.conversation_id, last_seq: accepted.seq });
      expect(await back.next('reply')).toMatchObject({ turn_id: accepted.turn_id, text: 'Checkout is until 2 pm.' });
      // Answered once: one reply in the conversation's events.
      const detail = (await client(node.url, key).get(`/api/v1/conversations/${ready.conversation_id}`)).body.data;
      expect(detail.events.filter((e: { type: string }) => e.type === 'reply')).toHaveLength(1);
      back.close();
    } finally {
      await model.close();
    }
  }

  it("SQLite: the next start of the node answers a model agent's turn its model was writing", async () => {
    const env = { DATA_DIR: join(sandbox.root, 'sqlite-model'), DATABASE_URL: '' };
    const first = await start(env);
    await killedMidModel(first, await bootstrapKey(first), () => start(env));
  }, 40_000);

  it.skipIf(!TEST_DATABASE_URL)(
    "PostgreSQL: another node answers a model agent's turn its model was writing when the first is killed",
    async () => {
      await withScratchDatabase(TEST_DATABASE_URL!, 'concierge_model_takeover', async (databaseUrl) => {
        const env = { DATA_DIR: join(sandbox.root, 'pg-model'), DATABASE_URL: databaseUrl };
        const first = await start(env);
        const key = await bootstrapKey(first);
        const second = await start(env);
        await killedMidModel(first, key, async () => second);
      });
    },
    40_000,
  );
});
