import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readActivity } from '../../test/activity-reader.js';
import {
  Widget,
  deploy,
  mintToken,
  postReply,
  type ServiceRef,
  startCustomerServer,
} from '../../test/concierge-kit.js';
import { client, TEST_DATABASE_URL, waitFor } from '../../test/harness.js';
import {
  bootstrapKey,
  type NodeProcess,
  startServiceProcess,
  withScratchDatabase,
} from '../../test/service-process.js';

/** Real service processes (`server/src/main.ts`), killed and restarted like in production. */
describe.each([
  ['sqlite', true],
  ['postgres', Boolean(TEST_DATABASE_URL)],
])('service processes [%s]', (kind, enabled) => {
  let dataDir: string;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  const running: NodeProcess[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'concierge-procs-'));
  });
  afterAll(async () => {
    for (const p of running) p.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
  // Each test has a customer of its own: what one tells its hook to do, or has called, is nobody else's.
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(() => customer.close());

  /** Runs `work` with a way to start nodes on one fresh store of this kind. */
  async function onStore(work: (start: () => Promise<NodeProcess>) => Promise<void>): Promise<void> {
    const run = async (databaseUrl: string) => {
      const env = {
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: mkdtempSync(join(dataDir, 'store-')),
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'warn',
        HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
      };
      await work(async () => {
        const node = await startServiceProcess(env);
        running.push(node);
        return node;
      });
    };
    if (kind === 'sqlite') await run('');
    else await withScratchDatabase(TEST_DATABASE_URL!, 'concierge_test', run);
  }

  const ref = (node: NodeProcess, key: string): ServiceRef => ({
    url: node.url,
    newCustomer: async () => ({ customerId: '', apiKey: key }),
  });

  it.skipIf(!enabled)(
    'delivers a reply accepted just before a SIGKILL after the restart and resume',
    async () => {
      await onStore(async (start) => {
        const first = await start();
        const key = await bootstrapKey(first);
        customer.state.behaviour = (_c, res) => res.writeHead(202).end();
        const { deploymentId, secret } = await deploy(ref(first, key), { hook_url: customer.hookUrl });
        const token = await mintToken(secret, deploymentId);
        const widget = await Widget.open(first, deploymentId);
        const ready = await widget.hello(token);
        widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Late checkout?', mode: 'text' });
        const { turn_id, seq } = await widget.next('turn_acknowledged');
        // The visitor is away: the reply can only reach them from the store.
        widget.close();
        await widget.closed;

        const posted = await postReply(
          first,
          deploymentId,
          { conversation_id: ready.conversation_id, turn_id, reply_text: 'Until 2 pm.' },
          secret,
        );
        expect(posted.status).toBe(202);
        first.child.kill('SIGKILL');
        expect(await first.exited).toBe(null);

        const second = await start();
        const back = await Widget.open(second, deploymentId);
        const resumed = await back.hello(token, { conversation_id: ready.conversation_id, last_seq: seq });
        expect(resumed).toMatchObject({ resumed: true, last_seq: seq + 1 });
        expect(await back.next('reply')).toEqual({
          type: 'reply',
          seq: seq + 1,
          turn_id,
          text: 'Until 2 pm.',
          actions: [],
        });
        expect(back.frames.filter((f) => f.seq !== undefined)).toHaveLength(1);
        back.close();
        second.child.kill('SIGTERM');
        expect(await second.exited).toBe(0);
      });
    },
    60_000,
  );

  it.skipIf(!enabled)(
    'loses and duplicates none of 1,000 replies in flight when the node is SIGKILLed: every one answered 202 is delivered once, and each turn resolves once',
    async () => {
      await onStore(async (start) => {
        const first = await start();
        const key = await bootstrapKey(first);
        customer.state.behaviour = (_c, res) => res.writeHead(202).end();
        const { deploymentId, secret } = await deploy(
          ref(first, key),
          { hook_url: customer.hookUrl },
          { engagement_rules: { max_pending_turns: 20, turns_per_minute: 600 } },
        );
        // 50 visitors with 20 acknowledged turns each, then away: the replies can reach them only from the store.
        // Each says hello before the next socket opens (a node refuses many sockets from one address before hello).
        const opened = [];
        for (let v = 0; v < 50; v++) {
          const token = await mintToken(secret, deploymentId, { sub: `guest-${v}` });
          const widget = await Widget.open(first, deploymentId);
          const ready = await widget.hello(token);
          opened.push({ token, widget, conversationId: ready.conversation_id as string });
        }
        const visitors = await Promise.all(
          opened.map(async ({ token, widget, conversationId }) => {
            const turns: string[] = [];
            let lastSeq = 0;
            for (let t = 0; t < 20; t++) {
              widget.send({ type: 'user_turn', client_turn_id: `c${t}`, text: `Question ${t}?`, mode: 'text' });
              const acknowledged = await widget.next('turn_acknowledged');
              turns.push(acknowledged.turn_id);
              lastSeq = acknowledged.seq;
            }
            widget.close();
            await widget.closed;
            return { token, conversationId, turns, lastSeq };
          }),
        );
        const replies = visitors.flatMap(({ conversationId, turns }) =>
          turns.map((turnId) => ({ conversation_id: conversationId, turn_id: turnId, reply_text: `About ${turnId}.` })),
        );
        expect(replies).toHaveLength(1_000);

        // All 1,000 posted at once; the node is killed once 300 of them have been answered 202.
        const accepted = new Set<string>();
        let killed = false;
        await Promise.all(
          replies.map(async (reply) => {
            const answered = await postReply(first, deploymentId, reply, secret).catch(() => undefined);
            if (answered?.status === 202 && !killed) accepted.add(reply.turn_id);
            if (accepted.size >= 300 && !killed) {
              killed = true;
              first.child.kill('SIGKILL');
            }
          }),
        );
        expect(killed).toBe(true);
        expect(await first.exited).toBe(null);

        const second = await start();
        /** Every stored event each visitor gets on resuming after their acknowledgements. */
        const replayed = async () => {
          const frames = [];
          for (const { token, conversationId, lastSeq } of visitors) {
            const widget = await Widget.open(second, deploymentId);
            const ready = await widget.hello(token, { conversation_id: conversationId, last_seq: lastSeq });
            await waitFor(
              async () => widget.frames.filter((f) => f.seq > lastSeq).length === ready.last_seq - lastSeq,
              10_000,
            );
            widget.close();
            frames.push(...widget.frames.filter((f) => f.seq > lastSeq));
          }
          return frames;
        };
        const afterCrash = await replayed();
        const repliedTo = afterCrash.filter((f) => f.type === 'reply').map((f) => f.turn_id as string);
        // Nothing answered 202 is lost, nothing is told twice.
        expect(new Set(repliedTo).size).toBe(repliedTo.length);
        for (const turnId of accepted) expect(repliedTo).toContain(turnId);

        // The customer's server retries them all: what was stored is a duplicate, the rest is stored now.
        const retried = await Promise.all(replies.map((reply) => postReply(second, deploymentId, reply, secret)));
        const stored = new Set(repliedTo);
        // The kill cut replies in flight: not all of them were stored.
        expect(stored.size).toBeLessThan(1_000);
        for (const [i, { status, body }] of retried.entries()) {
          const before = stored.has(replies[i]!.turn_id);
          expect([status, body.data.duplicate]).toEqual(before ? [200, true] : [202, false]);
        }
        const finally_ = (await replayed()).filter((f) => f.type === 'reply');
        expect(finally_.map((f) => f.turn_id).sort()).toEqual(replies.map((r) => r.turn_id).sort());
        for (const frame of finally_) expect(frame.text).toBe(`About ${frame.turn_id}.`);
        second.child.kill('SIGTERM');
        expect(await second.exited).toBe(0);
      });
    },
    120_000,
  );

  if (kind === 'postgres')
    it.skipIf(!enabled)(
      'shares one database between two nodes: replies and their parts cross, expiry and transcript events happen once, an erasure reaches a socket on the other node',
      async () => {
        await onStore(async (start) => {
          const nodeA = await start();
          const key = await bootstrapKey(nodeA);
          const nodeB = await start();
          customer.state.behaviour = (_c, res) => res.writeHead(202).end();
          const { deploymentId, secret } = await deploy(
            ref(nodeA, key),
            { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl },
            { runtime_config: { reply_timeout_s: 5 } },
          );
          const transcriptBefore = customer.transcript.length;
          const widget = await Widget.open(nodeA, deploymentId);
          const ready = await widget.hello(await mintToken(secret, deploymentId));

          // A reply posted to node B reaches the socket held by node A.
          widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Spa hours?', mode: 'text' });
          const first = await widget.next('turn_acknowledged');
          // Its parts as well: streamed through node B, shown by node A's socket as they come.
          const part = await postReply(
            nodeB,
            deploymentId,
            { conversation_id: ready.conversation_id, turn_id: first.turn_id, part: 0, text: 'From node' },
            secret,
          );
          expect([part.status, part.body.data]).toEqual([
            202,
            { turn_id: first.turn_id, status: 'acknowledged', part: 0, duplicate: false },
          ]);
          expect(await widget.next('reply_part')).toEqual({
            type: 'reply_part',
            seq: 3,
            turn_id: first.turn_id,
            part: 0,
            text: 'From node',
          });
          const posted = await postReply(
            nodeB,
            deploymentId,
            { conversation_id: ready.conversation_id, turn_id: first.turn_id, reply_text: 'From node B' },
            secret,
          );
          expect(posted.status).toBe(202);
          expect(await widget.next('reply')).toEqual({
            type: 'reply',
            seq: 4,
            turn_id: first.turn_id,
            text: 'From node B',
            actions: [],
          });

          // Rotated through node A: node B, which has just verified with the old secret, accepts the new one at once.
          const rotated = await client(nodeA.url, key).post(`/api/v1/deployments/${deploymentId}/rotate-secret`, {
            grace_period_s: 0,
          });
          const again = await postReply(
            nodeB,
            deploymentId,
            { conversation_id: ready.conversation_id, turn_id: first.turn_id, reply_text: 'From node B' },
            rotated.body.data.signing_secret,
          );
          expect([again.status, again.body.data]).toEqual([
            200,
            { turn_id: first.turn_id, status: 'resolved', duplicate: true },
          ]);

          // A turn nobody answers expires once, though both nodes sweep.
          widget.send({ type: 'user_turn', client_turn_id: 'c2', text: 'Anyone?', mode: 'text' });
          const second = await widget.next('turn_acknowledged');
          expect(await widget.next('turn_failed', 10_000)).toEqual({
            type: 'turn_failed',
            seq: 7,
            turn_id: second.turn_id,
            reason: 'reply_timeout',
          });

          // Both nodes deliver transcript events: each once, in order.
          const events = await waitFor(async () => {
            const got = customer.transcript.slice(transcriptBefore).map((c) => c.body);
            return got.length >= 7 && got;
          }, 10_000);
          await new Promise((r) => setTimeout(r, 1_500));
          const all = customer.transcript.slice(transcriptBefore).map((c) => c.body);
          expect(all.map((e) => e.id)).toEqual(events.map((e) => e.id));
          expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
          expect(all.map((e) => e.type)).toEqual([
            'conversation.started',
            'turn.created',
            'turn.acknowledged',
            'turn.resolved',
            'turn.created',
            'turn.acknowledged',
            'turn.failed',
          ]);
          expect(widget.frames.filter((f) => f.type === 'turn_failed')).toHaveLength(1);

          // Erased through node B: the socket on node A finds its conversation gone and closes with 4410.
          expect((await client(nodeB.url, key).del(`/api/v1/conversations/${ready.conversation_id}`)).status).toBe(200);
          expect(await widget.next('error', 5_000)).toMatchObject({ code: 'conversation_ended' });
          expect((await widget.closed).code).toBe(4410);
          for (const node of [nodeA, nodeB]) node.child.kill('SIGTERM');
          expect(await Promise.all([nodeA.exited, nodeB.exited])).toEqual([0, 0]);
        });
      },
      60_000,
    );

  if (kind === 'postgres')
    it.skipIf(!enabled)(
      'a person on node A, the visitor on node B: takeover, a waiting turn, the answer and release cross; node A streams what node B stored',
      async () => {
        await onStore(async (start) => {
          const nodeA = await start();
          const key = await bootstrapKey(nodeA);
          const nodeB = await start();
          const { deploymentId, secret } = await deploy(ref(nodeA, key), { hook_url: customer.hookUrl });
          const api = client(nodeA.url, key);
          const activity = await readActivity(nodeA.url, { authorization: `Bearer ${key}` });
          const widget = await Widget.open(nodeB, deploymentId);
          const { conversation_id } = await widget.hello(await mintToken(secret, deploymentId));
          const path = `/api/v1/conversations/${conversation_id}`;

          expect((await api.post(`${path}/takeover`, { name: 'Maria' })).status).toBe(200);
          expect(await widget.next('operator_joined')).toEqual({ type: 'operator_joined', seq: 1, name: 'Maria' });
          widget.send({ type: 'user_turn', client_turn_id: 'n1', text: 'Is the pool heated?', mode: 'text' });
          const { turn_id } = await widget.next('turn_acknowledged');
          expect(customer.calls).toHaveLength(0);
          // Stored on node B, streamed by node A.
          const seen = await waitFor(
            async () => activity.messages.some((m) => m.data.event?.type === 'turn_acknowledged') && activity.messages,
            5_000,
          );
          expect(seen.map((m) => m.data.event?.type ?? `handoff:${m.data.handler}`)).toEqual([
            'operator_joined',
            'handoff:person',
            'turn_accepted',
            'turn_acknowledged',
          ]);
          expect(
            (await api.get(`/api/v1/conversations?handler=person`)).body.data.map(
              (c: { id: string; waiting_turns: number }) => [c.id, c.waiting_turns],
            ),
          ).toEqual([[conversation_id, 1]]);

          expect((await api.post(`${path}/turns/${turn_id}/reply`, { reply_text: 'Yes, to 28 °C.' })).status).toBe(202);
          expect(await widget.next('reply')).toEqual({
            type: 'reply',
            seq: 4,
            turn_id,
            text: 'Yes, to 28 °C.',
            actions: [],
            name: 'Maria',
          });
          expect((await api.post(`${path}/release`)).status).toBe(200);
          expect(await widget.next('operator_left')).toEqual({ type: 'operator_left', seq: 5, name: 'Maria' });
          widget.send({ type: 'user_turn', client_turn_id: 'n2', text: 'Thanks!', mode: 'text' });
          await widget.next('turn_acknowledged');
          expect(customer.calls.map((c) => c.body.text)).toEqual(['Thanks!']);
          await waitFor(
            async () => activity.messages.filter((m) => m.data.event?.type === 'turn_acknowledged').length === 2,
            5_000,
          );
          const seqs = activity.messages.filter((m) => m.data.event).map((m) => m.data.event.seq);
          expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
          await activity.stop();
          widget.close();
          for (const node of [nodeA, nodeB]) node.child.kill('SIGTERM');
          expect(await Promise.all([nodeA.exited, nodeB.exited])).toEqual([0, 0]);
        });
      },
      60_000,
    );
});
