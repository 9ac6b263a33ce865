import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  deploy,
  mintToken,
  postReply,
  type ServiceRef,
  startCustomerServer,
  Widget,
} from '../../test/concierge-kit.js';
import { call, client, TEST_DATABASE_URL, waitFor } from '../../test/harness.js';
import {
  bootstrapKey,
  type NodeProcess,
  startServiceProcess,
  withScratchDatabase,
} from '../../test/service-process.js';

/**
 * What a PostgreSQL restart or failover does to a client: every connection is terminated, and
 * new ones are refused for a while. Two real service processes share the database.
 */
describe.skipIf(!TEST_DATABASE_URL)('a PostgreSQL outage [postgres]', () => {
  let dataDir: string;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  let admin: pg.Client;
  const running: NodeProcess[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'concierge-outage-'));
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
  });
  afterAll(async () => {
    for (const p of running) p.child.kill('SIGKILL');
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  });
  // Each test has a customer of its own: what one tells its hook to do, or has called, is nobody else's.
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(() => customer.close());

  const cut = async (database: string) => {
    await admin.query(`alter database ${database} allow_connections false`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database]);
  };
  const restore = (database: string) => admin.query(`alter database ${database} allow_connections true`);
  const listeners = async (database: string) =>
    Number(
      (
        await admin.query("select count(*) as n from pg_stat_activity where datname = $1 and query ilike 'listen %'", [
          database,
        ])
      ).rows[0].n,
    );

  it('lives through it: 503 during, ready within 5 s after, LISTEN and every loop back, no reply lost, the hook answer kept', async () => {
    await withScratchDatabase(TEST_DATABASE_URL!, 'concierge_outage', async (url) => {
      const database = new URL(url).pathname.slice(1);
      const env = {
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        DATABASE_URL: url,
        LOG_LEVEL: 'warn',
        HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
      };
      const nodeA = await startServiceProcess(env);
      running.push(nodeA);
      const key = await bootstrapKey(nodeA);
      const nodeB = await startServiceProcess(env);
      running.push(nodeB);
      const ref: ServiceRef = { url: nodeA.url, newCustomer: async () => ({ customerId: '', apiKey: key }) };
      const held: ServerResponse[] = [];
      customer.state.behaviour = (_call, res) => res.writeHead(202).end();
      const { deploymentId, secret } = await deploy(
        ref,
        { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl },
        { engagement_rules: { max_pending_turns: 20 } },
      );
      const token = await mintToken(secret, deploymentId);
      const widget = await Widget.open(nodeA, deploymentId);
      const { conversation_id } = await widget.hello(token);
      // A turn nobody answers, due to expire just after the store is back: the sweeper must be running then.
      const expiring = await deploy(ref, { hook_url: customer.hookUrl }, { runtime_config: { reply_timeout_s: 5 } });
      const expiringWidget = await Widget.open(nodeA, expiring.deploymentId);
      await expiringWidget.hello(await mintToken(expiring.secret, expiring.deploymentId));
      expiringWidget.send({ type: 'user_turn', client_turn_id: 'unanswered', text: 'Anyone?', mode: 'text' });
      const { turn_id: unanswered } = await expiringWidget.next('turn_acknowledged');
      const ask = async (id: string) => {
        widget.send({ type: 'user_turn', client_turn_id: id, text: `Question ${id}`, mode: 'text' });
        return (await widget.next('turn_accepted')).turn_id as string;
      };

      // Turns acknowledged before the cut: their replies are posted to node B all through it.
      const waiting: string[] = [];
      for (let i = 0; i < 12; i++) {
        waiting.push(await ask(`before-${i}`));
        await widget.next('turn_acknowledged');
      }
      const accepted = new Set<string>();
      const answered: Record<number, number> = {};
      let posting = true;
      const poster = (async () => {
        for (let i = 0; posting || waiting.length; i++) {
          const turnId = waiting.shift();
          if (!turnId) break;
          const res = await postReply(
            nodeB,
            deploymentId,
            { conversation_id, turn_id: turnId, reply_text: `Answer to ${turnId}` },
            secret,
          );
          answered[res.status] = (answered[res.status] ?? 0) + 1;
          if (res.status === 202) accepted.add(turnId);
          // A refused reply is the customer's to retry, as a customer would.
          else waiting.push(turnId);
          await new Promise((r) => setTimeout(r, 150));
        }
      })();

      // A turn whose hook is answered while the store is gone.
      customer.state.behaviour = (_call, res) => void held.push(res);
      const duringCut = await ask('during');
      await waitFor(async () => held.length === 1);

      await cut(database);
      await new Promise((r) => setTimeout(r, 500));
      held[0]!.writeHead(202).end();
      for (const node of [nodeA, nodeB]) {
        const ready = await call(node.url, 'GET', '/readyz');
        expect([ready.status, ready.body.error?.code, ready.headers.get('retry-after')]).toEqual([
          503,
          'unavailable',
          '1',
        ]);
        const list = await call(node.url, 'GET', '/api/v1/agents', { key });
        expect([list.status, list.body.error?.code, list.headers.get('retry-after')]).toEqual([
          503,
          'unavailable',
          '1',
        ]);
      }
      const refusedReply = await postReply(
        nodeB,
        deploymentId,
        { conversation_id, turn_id: duringCut, reply_text: 'Not yet' },
        secret,
      );
      expect([refusedReply.status, refusedReply.body.error?.code]).toEqual([503, 'unavailable']);
      // A visitor arriving now is asked to come back, not failed with 1011.
      const newcomer = await Widget.open(nodeA, deploymentId).catch((err: Error) => err);
      if (newcomer instanceof Widget) {
        newcomer.send({ type: 'hello', token });
        expect((await newcomer.closed).code).toBe(1013);
      } else expect(newcomer.message).toBe('HTTP 503');
      await new Promise((r) => setTimeout(r, 2_000));
      expect([nodeA.child.exitCode, nodeB.child.exitCode]).toEqual([null, null]);

      await restore(database);
      const back = Date.now();
      for (const node of [nodeA, nodeB])
        await waitFor(async () => (await call(node.url, 'GET', '/readyz')).status === 200, 5_000);
      // The hook's 202, met while the store was gone, was kept and written once it came back.
      expect(await widget.next('turn_acknowledged', 5_000)).toMatchObject({ turn_id: duringCut });
      await waitFor(async () => (await listeners(database)) === 2, 5_000);
      expect(Date.now() - back).toBeLessThan(5_000);

      // Replies cross nodes by NOTIFY again, well inside the 2 s catch-up.
      customer.state.behaviour = (_call, res) => res.writeHead(202).end();
      for (let i = 0; i < 3; i++) {
        const turnId = await ask(`after-${i}`);
        await widget.next('turn_acknowledged');
        const started = Date.now();
        expect(
          (await postReply(nodeB, deploymentId, { conversation_id, turn_id: turnId, reply_text: 'Crossed' }, secret))
            .status,
        ).toBe(202);
        expect(
          await waitFor(async () => widget.frames.find((f) => f.type === 'reply' && f.turn_id === turnId)),
        ).toMatchObject({ text: 'Crossed' });
        expect(Date.now() - started).toBeLessThan(500);
      }

      // The background loops resumed by themselves: the outbox sends what was written after the
      // cut, the sweeper expires the unanswered turn, the job runner generates a new agent, and
      // usage counts are written.
      await waitFor(
        async () =>
          customer.transcript.find((c) => c.body.type === 'turn.acknowledged' && c.body.data.turn_id === duringCut),
        5_000,
      );
      expect(await expiringWidget.next('turn_failed', 8_000)).toMatchObject({
        turn_id: unanswered,
        reason: 'reply_timeout',
      });
      const api = client(nodeB.url, key);
      const job = (await api.post('/api/v1/agents', { name: 'After the outage' })).body.data;
      await waitFor(async () => (await api.get(job.polling_url)).body.data.status === 'succeeded', 5_000);
      const usage = await api.get('/api/v1/settings/api-key/usage?days=1');
      expect([usage.status, usage.body.data.total_requests > 0]).toEqual([200, true]);

      // Every reply that got a 202 reached the widget, once; the refused ones were posted again.
      posting = false;
      await poster;
      expect(answered[503]).toBeGreaterThan(0);
      expect(answered[500]).toBeUndefined();
      await waitFor(
        async () => widget.frames.filter((f) => f.type === 'reply' && accepted.has(f.turn_id)).length === 12,
        5_000,
      );
      expect(accepted.size).toBe(12);
      expect(new Set(widget.frames.filter((f) => f.type === 'reply').map((f) => f.turn_id)).size).toBe(
        widget.frames.filter((f) => f.type === 'reply').length,
      );

      // Each node logged the outage once when it began and once when it ended.
      for (const node of [nodeA, nodeB]) {
        const lines = node.stdout().split('\n');
        expect(lines.filter((l) => l.includes('store unavailable; retrying until it answers'))).toHaveLength(1);
        expect(lines.filter((l) => l.includes('store reachable again'))).toHaveLength(1);
        expect(lines.filter((l) => l.includes('"level":50') && !l.includes('store unavailable'))).toEqual([]);
      }
      widget.close();
      expiringWidget.close();
      for (const node of [nodeA, nodeB]) node.child.kill('SIGTERM');
      expect(await Promise.all([nodeA.exited, nodeB.exited])).toEqual([0, 0]);
    });
  }, 60_000);
});
