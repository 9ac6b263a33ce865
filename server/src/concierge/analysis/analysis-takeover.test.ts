import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { deployAgent, startCustomerServer } from '../../../test/concierge-kit.js';
import { complete, type ModelCall, startModelServer } from '../../../test/model-server.js';
import { client, TEST_DATABASE_URL, waitFor } from '../../../test/harness.js';
import { processSandbox } from '../../../test/process-sandbox.js';
import {
  bootstrapKey,
  loopbackNodes,
  type NodeProcess,
  nodeRef,
  withScratchDatabase,
} from '../../../test/service-process.js';

const ANALYSED = JSON.stringify({
  fields: {},
  criteria: { answered: { result: 'success', reason: 'The question was answered.' } },
});

/**
 * README, Tests and analysis: a node killed while its model analyses a conversation. Another node
 * (or the next start) takes the analysis over once the lease passes, and it is stored and told once.
 */
describe('a node killed in the middle of an analysis', () => {
  const sandbox = processSandbox('concierge-analysis');
  const { running } = sandbox;

  const nodes = loopbackNodes(running);
  const start = (env: NodeJS.ProcessEnv) => nodes({ ANALYSIS_LEASE_S: '4', ...env });
  const ref = nodeRef;

  async function killedMidAnalysis(first: NodeProcess, key: string, survivor: () => Promise<NodeProcess>) {
    // The first analysis is held unanswered; any later one is answered at once.
    const held: ServerResponse[] = [];
    const model = await startModelServer((call: ModelCall, res) => {
      if (held.length) return complete(res, call.body.model, ANALYSED);
      held.push(res);
    });
    const customer = await startCustomerServer((call, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reply_text: 'Until 2 pm.' })),
    );
    try {
      const api = client(first.url, key);
      const endpoint = await api.post('/api/v1/model-endpoints', { name: 'M', base_url: model.baseUrl });
      const agent = await deployAgent(
        ref(first, key),
        api,
        {
          evaluation: { endpoint_id: endpoint.body.data.id, model: 'analyst' },
          analysis: { summary: false, criteria: [{ id: 'answered', description: 'The question was answered' }] },
        },
        { channel_config: { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl } },
      );
      const { widget, conversationId } = await agent.visitor('guest-1');
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Late checkout?', mode: 'text' });
      await widget.next('reply');
      widget.send({ type: 'end' });
      await widget.next('conversation_ended');
      widget.close();
      await waitFor(async () => held.length === 1, 10_000, 'the first analysis call');

      first.child.kill('SIGKILL');
      await first.exited;
      const node = await survivor();
      const detail = await waitFor(
        async () => {
          const found = (await client(node.url, key).get(`/api/v1/conversations/${conversationId}`)).body.data;
          return found?.analysis && found;
        },
        20_000,
        'the analysis by a live node',
      );
      expect(detail.analysis.criteria).toEqual({
        answered: { result: 'success', reason: 'The question was answered.' },
      });
      expect(model.calls).toHaveLength(2);
      const told = () =>
        customer.transcript.filter(
          (t) => t.body.type === 'conversation.analyzed' && t.body.conversation_id === conversationId,
        );
      await waitFor(async () => told().length === 1, 10_000, 'conversation.analyzed');
      // Once: a little later, still one.
      await new Promise((r) => setTimeout(r, 500));
      expect(told()).toHaveLength(1);
      expect(model.calls).toHaveLength(2);
    } finally {
      for (const res of held) res.destroy();
      await model.close();
      await customer.close();
    }
  }

  it('SQLite: the next start of the node analyses it, once', async () => {
    const env = { DATA_DIR: join(sandbox.root, 'sqlite'), DATABASE_URL: '' };
    const first = await start(env);
    await killedMidAnalysis(first, await bootstrapKey(first), () => start(env));
  }, 60_000);

  it.skipIf(!TEST_DATABASE_URL)(
    'PostgreSQL: another node analyses it, once',
    async () => {
      await withScratchDatabase(TEST_DATABASE_URL!, 'concierge_analysis_takeover', async (databaseUrl) => {
        const env = { DATA_DIR: join(sandbox.root, 'pg'), DATABASE_URL: databaseUrl };
        const first = await start(env);
        const key = await bootstrapKey(first);
        // Started once the first has claimed the analysis: alive while the first dies.
        let second: Promise<NodeProcess> | undefined;
        await killedMidAnalysis(first, key, () => (second ??= start(env)));
      });
    },
    60_000,
  );
});
