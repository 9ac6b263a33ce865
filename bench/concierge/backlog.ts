import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { quantile } from '../stats.js';
import { BenchSocket, type HookCall, replyTo } from './kit.js';
import { startConcierge } from './service.js';

const CALM = 5;
const BACKLOG = 10_000;
const PHASE_MS = 10_000;
const PAUSE_MS = 100;

export interface RoundTrips {
  p50: number;
  p99: number;
  max: number;
  count: number;
  failed: number;
}

export interface Backlog {
  quiet: RoundTrips;
  flooded: RoundTrips;
  /** Backlog events delivered while the others were measured. */
  drained: number;
}

/** Each calm conversation: turn → hook 202 → signed reply → reply frame, again after a short pause, for `ms`. */
async function roundTrips(sockets: BenchSocket[], ms: number): Promise<RoundTrips> {
  const end = Date.now() + ms;
  const samples: number[] = [];
  let failed = 0;
  await Promise.all(
    sockets.map(async (socket, n) => {
      for (let t = 0; Date.now() < end; t++) {
        const sent = performance.now();
        const frame = await Promise.race([
          socket.request(
            { type: 'user_turn', client_turn_id: `p${Date.now()}-${n}-${t}`, text: 'Is the pool open?', mode: 'text' },
            (f) => ['reply', 'turn_failed', 'error'].includes(f.type),
          ),
          sleep(5_000).then(() => ({ type: 'unanswered' })),
        ]);
        if (frame.type === 'reply') samples.push(performance.now() - sent);
        else failed++;
        await sleep(PAUSE_MS);
      }
    }),
  );
  return {
    p50: quantile(samples, 0.5),
    p99: quantile(samples, 0.99),
    max: Math.max(...samples),
    count: samples.length,
    failed,
  };
}

/**
 * Five calm conversations measured alone, then while one other conversation's 10,000 transcript
 * events drain to the customer's receiver (in order, one at a time): what a flood of replies
 * leaves behind. The backlog is written straight into the service's SQLite file, as the flood
 * would have left it; the service delivers it as any other.
 */
export async function backlogLatency(): Promise<Backlog> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let drained = 0;
  let flooded = '';
  const concierge = await startConcierge((call: HookCall & { type?: string }, dep) => {
    if (call.reply_url) void replyTo(agent, dep.secret, call, 'Until 10 pm.').catch(() => {});
    else if (call.conversation_id === flooded && call.type === 'turn.created') drained++;
  });
  try {
    const url = concierge.nodes[0]!.url;
    const res = await fetch(`${url}/api/v1/deployments/${concierge.dep.deploymentId}`, {
      headers: { authorization: `Bearer ${concierge.apiKey}` },
    });
    const hookUrl = ((await res.json()) as { data: { channel_config: { hook_url: string } } }).data.channel_config
      .hook_url;
    const put = await fetch(`${url}/api/v1/deployments/${concierge.dep.deploymentId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${concierge.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        channel_config: { hook_url: hookUrl, transcript_hook_url: hookUrl.replace(/\/hook$/, '/transcript') },
      }),
    });
    if (!put.ok) throw new Error(`setting the transcript URL: ${put.status}`);
    const calm = await Promise.all(
      Array.from({ length: CALM }, (_, i) => BenchSocket.session(url, concierge.dep, `calm-${i}`)),
    );
    const quiet = await roundTrips(calm, PHASE_MS);

    const floodedSocket = await BenchSocket.session(url, concierge.dep, 'flooded');
    flooded = floodedSocket.conversationId;
    seedBacklog(concierge.sqliteFile, concierge.dep.deploymentId, flooded);
    const during = await roundTrips(calm, PHASE_MS);
    for (const socket of [...calm, floodedSocket]) socket.close();
    return { quiet, flooded: during, drained };
  } finally {
    await concierge.stop();
    agent.destroy();
  }
}

function seedBacklog(file: string, deploymentId: string, conversationId: string): void {
  const db = new SQLite(file);
  try {
    db.pragma('busy_timeout = 5000');
    const at = new Date().toISOString();
    const insert = db.prepare(
      "INSERT INTO transcript_outbox (id, deployment_id, conversation_id, position, body, status, attempts, next_attempt_at, lease_expires_at, created_at, is_head) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, NULL, ?, ?)",
    );
    db.transaction(() => {
      for (let n = 0; n < BACKLOG; n++) {
        const id = `evt_bench${n}`;
        const body = JSON.stringify({
          id,
          type: 'turn.created',
          created_at: at,
          deployment_id: deploymentId,
          conversation_id: conversationId,
          data: { turn_id: `t${n}`, text: 'x'.repeat(200) },
        });
        insert.run(id, deploymentId, conversationId, 1_000_000 + n, body, at, at, 0);
      }
    })();
    // The head, if the conversation's own events were all delivered already; else the queue reaches it in order.
    db.prepare(
      "UPDATE transcript_outbox SET is_head = 1 WHERE id = 'evt_bench0' AND NOT EXISTS (SELECT 1 FROM transcript_outbox WHERE conversation_id = ? AND is_head = 1)",
    ).run(conversationId);
  } finally {
    db.close();
  }
}
