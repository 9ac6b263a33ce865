import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { startHaproxy } from '../../test/balancer.js';
import { deploy, mintToken, postReply, type ServiceRef, startCustomerServer } from '../../test/concierge-kit.js';
import { call, TEST_DATABASE_URL, waitFor } from '../../test/harness.js';
import {
  bootstrapKey,
  freePort,
  installed,
  type NodeProcess,
  startServiceProcess,
  withScratchDatabase,
} from '../../test/service-process.js';

const WIDGETS = 50;
/** Longer than HAProxy's two failed checks a second apart (deploy/haproxy.cfg), shorter than the default to keep the test quick. */
const DRAIN_S = '3';

/** The part of the widget's own session client (widget/src/session/client.ts) this test drives. */
interface WidgetSession {
  start(): void;
  stop(): void;
  say(text: string, mode: 'text' | 'voice'): void;
  onEvent(listener: (event: { type: string; text?: string; code?: string; message?: string }) => void): () => void;
}
type SessionClientClass = new (o: {
  baseUrl: string;
  deploymentId: string;
  getToken(): Promise<string>;
  storage: undefined;
  openSocket(url: string): unknown;
}) => WidgetSession;

/** One visitor: asks, waits for the answer, asks again; records every frame its sockets carried. */
class Visitor {
  readonly frames: { seq?: number; type: string; client_turn_id?: string; turn_id?: string; text?: string }[] = [];
  readonly asked: string[] = [];
  readonly answers: string[] = [];
  readonly errors: string[] = [];
  sockets = 0;
  paused = false;
  #waiting = false;
  readonly session: WidgetSession;

  constructor(
    SessionClient: SessionClientClass,
    balancer: string,
    deploymentId: string,
    token: () => Promise<string>,
    readonly name: string,
  ) {
    this.session = new SessionClient({
      baseUrl: balancer,
      deploymentId,
      getToken: token,
      storage: undefined,
      openSocket: (url) => {
        this.sockets++;
        const ws = new WebSocket(url);
        ws.on('message', (data) => this.frames.push(JSON.parse(String(data))));
        return ws;
      },
    });
    this.session.onEvent((event) => {
      if (event.type === 'reply') {
        this.answers.push(event.text!);
        this.#waiting = false;
        this.next();
      }
      if (event.type === 'ready') this.next();
      if (event.type === 'error') this.errors.push(`${event.code}: ${event.message}`);
    });
  }

  /** Asks the next question unless one is unanswered or the test paused the visitors. */
  next(): void {
    if (this.paused || this.#waiting) return;
    this.#waiting = true;
    const text = `${this.name} question ${this.asked.length + 1}`;
    this.asked.push(text);
    this.session.say(text, 'text');
  }

  get idle(): boolean {
    return !this.#waiting;
  }

  /** Every turn this visitor asked has been acknowledged by the customer's hook, or answered. */
  get settled(): boolean {
    const acknowledged = new Set(this.frames.filter((f) => f.type === 'turn_acknowledged').map((f) => f.turn_id));
    const accepted = this.frames.filter((f) => f.type === 'turn_accepted');
    return accepted.length === this.asked.length && accepted.every((f) => acknowledged.has(f.turn_id));
  }
}

describe('a rolling restart behind HAProxy', () => {
  it.skipIf(!TEST_DATABASE_URL || !installed('haproxy'))(
    `restarts three PostgreSQL nodes one at a time with SIGTERM, then SIGKILLs one, while ${WIDGETS} widgets talk: no turn fails, no event is lost or repeated, every reply arrives`,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'concierge-rolling-'));
      const customer = await startCustomerServer();
      const nodes: (NodeProcess | undefined)[] = [];
      let balancer: Awaited<ReturnType<typeof startHaproxy>> | undefined;
      const visitors: Visitor[] = [];
      try {
        await withScratchDatabase(TEST_DATABASE_URL!, 'concierge_rolling', async (databaseUrl) => {
          const balancerPort = await freePort();
          const balancerUrl = `http://127.0.0.1:${balancerPort}`;
          const ports = [await freePort(), await freePort(), await freePort()];
          const env = (port: number) => ({
            PORT: String(port),
            HOST: '127.0.0.1',
            DATABASE_URL: databaseUrl,
            DATA_DIR: join(dir, 'data'),
            PUBLIC_BASE_URL: balancerUrl,
            TRUST_PROXY: '1',
            DRAIN_S,
            LOG_LEVEL: 'warn',
            HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
            PREHELLO_SOCKETS_PER_ADDRESS: '1000',
          });
          const startNode = async (i: number) => (nodes[i] = await startServiceProcess(env(ports[i]!)));
          const first = await startNode(0);
          const key = await bootstrapKey(first);
          await startNode(1);
          await startNode(2);
          balancer = await startHaproxy(
            dir,
            ports.map((p) => `127.0.0.1:${p}`),
            balancerPort,
          );

          const ref: ServiceRef = { url: balancerUrl, newCustomer: async () => ({ customerId: '', apiKey: key }) };
          // The hook's longest timeout: on a machine busy with the rest of the suite, a slow answer
          // from this process's customer server must not become a retried or failed hook call.
          const { deploymentId, secret } = await deploy(
            ref,
            { hook_url: customer.hookUrl },
            { engagement_rules: { turns_per_minute: 600 }, runtime_config: { hook_timeout_ms: 15_000 } },
          );

          // The customer's server answers each hook with 202, then posts the reply through the
          // balancer to whichever node is next; a reply that meets a dying node is sent again,
          // as any customer server retries a 5xx or a lost connection.
          const posted: { turn: string; status: number }[] = [];
          customer.state.behaviour = (hook, res) => {
            res.writeHead(202).end();
            const body = {
              conversation_id: hook.body.conversation_id,
              turn_id: hook.body.turn_id,
              reply_text: `Answer to ${hook.body.text}`,
            };
            void (async () => {
              for (let attempt = 0; ; attempt++) {
                const reply = await postReply(ref, deploymentId, body, secret).catch(() => ({
                  status: 0,
                  body: undefined,
                }));
                if (reply.status === 202 || reply.status === 200 || attempt === 20) {
                  posted.push({ turn: body.turn_id, status: reply.status });
                  return;
                }
                await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
              }
            })();
          };

          const { SessionClient } = (await import('../../../widget/src/session/client' as string)) as {
            SessionClient: SessionClientClass;
          };
          for (let i = 0; i < WIDGETS; i++) {
            const token = () => mintToken(secret, deploymentId, { sub: `visitor-${i}` });
            visitors.push(new Visitor(SessionClient, balancerUrl, deploymentId, token, `v${i}`));
          }
          for (const visitor of visitors) visitor.session.start();
          const answered = () => visitors.reduce((n, v) => n + v.answers.length, 0);
          const progress = async (more: number) => {
            const target = answered() + more;
            await waitFor(async () => answered() >= target, 30_000, `${more} more answers`);
          };
          await progress(WIDGETS * 2);

          // Each node in turn: SIGTERM, a clean exit, a new process on the same port.
          for (let i = 0; i < 3; i++) {
            const node = nodes[i]!;
            node.child.kill('SIGTERM');
            expect(await node.exited).toBe(0);
            await startNode(i);
            await progress(WIDGETS * 2);
          }

          // A crash: the node is killed between hook calls (a hook call a crash cuts off fails its
          // turn after two minutes; README, Running several nodes), replies still in flight.
          for (const visitor of visitors) visitor.paused = true;
          await waitFor(async () => visitors.every((v) => v.settled), 30_000, 'every asked turn acknowledged').catch(
            (err: Error) => {
              const unsettled = visitors
                .filter((v) => !v.settled)
                .map((v) => `${v.name}: asked ${v.asked.length}, last frames ${JSON.stringify(v.frames.slice(-3))}`);
              throw new Error(`${err.message}; ${unsettled.join('; ')}`);
            },
          );
          nodes[1]!.child.kill('SIGKILL');
          expect(await nodes[1]!.exited).toBe(null);
          for (const visitor of visitors) {
            visitor.paused = false;
            visitor.next();
          }
          await progress(WIDGETS * 2);
          await startNode(1);
          await progress(WIDGETS);

          for (const visitor of visitors) visitor.paused = true;
          await waitFor(async () => visitors.every((v) => v.idle), 30_000, 'every question answered');

          for (const visitor of visitors) {
            // Each question answered once, in order, with its own answer.
            expect(visitor.answers).toEqual(visitor.asked.map((q) => `Answer to ${q}`));
            expect(visitor.errors).toEqual([]);
            // What the sockets carried: every event exactly once, numbered without a gap, a turn
            // accepted once per question (a resent turn made no second one), nothing failed.
            const seqs = visitor.frames.filter((f) => f.seq !== undefined).map((f) => f.seq);
            expect(seqs).toEqual(seqs.map((_s, i) => i + 1));
            expect(visitor.frames.filter((f) => f.type === 'turn_accepted').map((f) => f.text)).toEqual(visitor.asked);
            expect(visitor.frames.filter((f) => f.type === 'turn_failed')).toEqual([]);
          }
          // Widgets moved: each reconnected at least once (every node went away once).
          expect(visitors.every((v) => v.sockets >= 2)).toBe(true);
          expect(posted.every((p) => p.status === 202 || p.status === 200)).toBe(true);
          expect((await call(balancerUrl, 'GET', '/readyz')).status).toBe(200);
        });
      } finally {
        for (const visitor of visitors) visitor.session.stop();
        for (const node of nodes)
          if (node && node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL');
        await balancer?.stop();
        await customer.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
