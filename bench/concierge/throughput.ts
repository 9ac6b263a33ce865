import { Agent } from 'node:http';
import SQLite from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTarget } from '../process.js';
import { quantile } from '../stats.js';
import { BenchSocket, type Deployed, type HookCall, replyTo, startCustomer } from './kit.js';
import { type Concierge, startConcierge } from './service.js';
import type { FloorOwner } from './store-floor.js';

const SLOTS = 200;
const WARM_UP_MS = 2_000;
const MEASURE_MS = 10_000;
/** A slot moves to a new conversation after this many turns: the per-conversation turn limit is 600 a minute. */
const TURNS_PER_CONVERSATION = 100;

export interface Throughput {
  turnsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
  /** Signed replies the server answered with anything but 202 (or not at all). */
  refusedReplies: number;
}

/**
 * 200 visitors, each sending a turn as soon as the last one is answered: user_turn → hook →
 * 202 → signed reply → reply frame. Counts turns answered in the measured window.
 */
async function drive(open: (slot: number, round: number) => Promise<BenchSocket>): Promise<Throughput> {
  const started = Date.now();
  const measureFrom = started + WARM_UP_MS;
  const end = measureFrom + MEASURE_MS;
  const latencies: number[] = [];
  const refusedBefore = refusedReplies;
  let failed = 0;
  await Promise.all(
    Array.from({ length: SLOTS }, async (_, slot) => {
      for (let round = 0; Date.now() < end; round++) {
        const socket = await open(slot, round);
        for (let t = 0; t < TURNS_PER_CONVERSATION && Date.now() < end; t++) {
          const sent = performance.now();
          const sentAt = Date.now();
          const answered = socket.request(
            { type: 'user_turn', client_turn_id: `t${t}`, text: 'When is breakfast?', mode: 'text' },
            (f) => ['reply', 'turn_failed', 'error'].includes(f.type),
          );
          // A turn whose reply was refused would wait for its reply timeout: past the window it counts as failed.
          const frame = await Promise.race([
            answered,
            sleep(end + 1_000 - Date.now()).then(() => ({ type: 'unanswered' })),
          ]);
          if (frame.type === 'unanswered') {
            failed++;
            break;
          }
          // Only turns sent and answered inside the window: the start-up burst stays out of the figures.
          if (sentAt < measureFrom || Date.now() > end) continue;
          if (frame.type === 'reply') latencies.push(performance.now() - sent);
          else failed++;
        }
        socket.close();
      }
    }),
  );
  return {
    turnsPerSecond: latencies.length / (MEASURE_MS / 1000),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    failed,
    refusedReplies: refusedReplies - refusedBefore,
  };
}

/** Replies at once; a refused or lost reply shows up as a turn that never gets its reply frame. */
const replying = (agent: Agent) => (call: HookCall, dep: Deployed) => {
  replyTo(agent, dep.secret, call, 'Breakfast is from 7 to 10.').then(
    (status) => status === 202 || (refusedReplies++, undefined),
    () => refusedReplies++,
  );
};
let refusedReplies = 0;

/**
 * The same hops with node:http and ws only: no store, no checks. With `durable`, each step
 * first stores the rows the service stores for it in a bare better-sqlite3 transaction, on a
 * service's own (idle) SQLite store: the durable floor.
 */
export async function barePipeline(durable?: { file: string; owner: FloorOwner }): Promise<Throughput> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const customer = await startCustomer((call) => replying(agent)(call, { deploymentId: '', secret: 'whsec_bare' }));
  const target = await startTarget('bench/targets/bare-pipeline.ts', {
    HOOK_URL: customer.hookUrl,
    ...(durable ? { BARE_STORE: durable.file, BARE_OWNER: JSON.stringify(durable.owner) } : {}),
  });
  try {
    return await drive(() => BenchSocket.open(`${target.url.replace(/^http/, 'ws')}/ws`));
  } finally {
    await target.stop();
    await customer.close();
    agent.destroy();
  }
}

/** {@link barePipeline} storing what the service stores, on a fresh service store with its deployment (the service idle meanwhile). */
export async function durablePipeline(): Promise<Throughput> {
  const concierge = await startConcierge(() => {});
  try {
    const db = new SQLite(concierge.sqliteFile, { readonly: true });
    const row = db
      .prepare('SELECT customer_id, agent_id FROM deployments WHERE id = ?')
      .get(concierge.dep.deploymentId) as { customer_id: string; agent_id: string };
    db.close();
    return await barePipeline({
      file: concierge.sqliteFile,
      owner: { customerId: row.customer_id, deploymentId: concierge.dep.deploymentId, agentId: row.agent_id },
    });
  } finally {
    await concierge.stop();
  }
}

/** Something else the service does while the turns run (the activity stream's readers): started once it is up, stopped after. */
export type Alongside<T> = (concierge: Concierge) => Promise<{ stop(): Promise<T> }>;

export async function serviceThroughput<T = undefined>(
  o: { databaseUrl?: string; nodeArgs?: string[]; alongside?: Alongside<T> } = {},
): Promise<Throughput & { alongside?: T }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const concierge = await startConcierge(replying(agent), {
    ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
    ...(o.nodeArgs ? { nodeArgs: o.nodeArgs } : {}),
  });
  try {
    const beside = await o.alongside?.(concierge);
    const measured = await drive((slot, round) =>
      BenchSocket.session(concierge.nodes[0]!.url, concierge.dep, `guest-${slot}-${round}`),
    );
    return { ...measured, alongside: await beside?.stop() };
  } finally {
    await concierge.stop();
    agent.destroy();
  }
}
