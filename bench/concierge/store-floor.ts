import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { quantile } from '../stats.js';
import { turnLifecycle } from '../../server/src/concierge/conversations/turn.lifecycle.js';
import type { DeploymentContext } from '../../server/src/concierge/deployment-context.js';
import { UnitOfWork } from '../../server/src/concierge/events/event.recorder.js';
import { openStore } from '../../server/src/store/db.js';
import type { Latency } from './replies.js';

/**
 * A turn the service resolved in the measured run: it is put back to `acknowledged` (untimed),
 * then its reply's statements are replayed, so the same rows, indexes and triggers change.
 */
export interface ResolvedTurn {
  conversationId: string;
  turnId: string;
  deploymentId: string;
}

const REPLY = 'Breakfast is from 7 to 10.';
const frameOf = (turnId: string, seq: number) => JSON.stringify({ type: 'reply', seq, turn_id: turnId, text: REPLY, actions: [] });

function summary(samples: number[]): Latency {
  const measured = samples.slice(Math.floor(samples.length / 10));
  return { p50: quantile(measured, 0.5), p99: quantile(measured, 0.99) };
}

/**
 * The store's floor for one reply on SQLite: a bare better-sqlite3 transaction of the reply's
 * statements (the turn's state change, the conversation's next seq, the widget event), prepared
 * once, on the service's own file with its pragmas and triggers, one transaction per reply (ms).
 */
export function sqliteReplyFloor(file: string, turns: readonly ResolvedTurn[]): Latency {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const turn = db.prepare(
    `UPDATE turns SET reply_text = ?, reply_actions = NULL, resolved_at = ?, reply_received_at = ?, status = 'resolved', updated_at = ?
     WHERE id = ? AND conversation_id = ? AND EXISTS (SELECT id FROM conversations WHERE id = ? AND deployment_id = ?) AND status = 'acknowledged' RETURNING *`,
  );
  const reopen = db.prepare(`UPDATE turns SET status = 'acknowledged', reply_text = NULL, resolved_at = NULL, reply_received_at = NULL WHERE id = ?`);
  db.transaction(() => {
    for (const t of turns) reopen.run(t.turnId);
  })();
  const conversation = db.prepare('UPDATE conversations SET last_seq = last_seq + 1, updated_at = ? WHERE id = ? RETURNING last_seq');
  const event = db.prepare('INSERT INTO conversation_events (conversation_id, seq, type, frame, created_at) VALUES (?, ?, ?, ?, ?)');
  const reply = db.transaction((t: ResolvedTurn) => {
    const now = new Date().toISOString();
    if (!turn.get(REPLY, now, now, now, t.turnId, t.conversationId, t.conversationId, t.deploymentId)) throw new Error(`turn ${t.turnId} not found`);
    const { last_seq: seq } = conversation.get(now, t.conversationId) as { last_seq: number };
    event.run(t.conversationId, seq, 'reply', frameOf(t.turnId, seq), now);
  });
  const samples: number[] = [];
  try {
    for (const t of turns) {
      const started = performance.now();
      reply(t);
      samples.push(performance.now() - started);
    }
  } finally {
    db.close();
  }
  return summary(samples);
}

/**
 * The same on PostgreSQL with a bare `pg` client: BEGIN, the three statements (named, so
 * prepared once), COMMIT, then NOTIFY, one round trip each, timed per reply (ms).
 */
export async function pgReplyFloor(url: string, turns: readonly ResolvedTurn[]): Promise<Latency> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const samples: number[] = [];
  try {
    await client.query(`UPDATE turns SET status = 'acknowledged', reply_text = NULL, resolved_at = NULL, reply_received_at = NULL WHERE id = ANY($1)`, [turns.map((t) => t.turnId)]);
    for (const t of turns) {
      const started = performance.now();
      const now = new Date().toISOString();
      await client.query('BEGIN');
      const moved = await client.query({
        name: 'floor_turn',
        text: `UPDATE turns SET reply_text = $1, resolved_at = $2, reply_received_at = $2, status = 'resolved', updated_at = $2
               WHERE id = $3 AND conversation_id = $4 AND EXISTS (SELECT id FROM conversations WHERE id = $4 AND deployment_id = $5) AND status = 'acknowledged' RETURNING *`,
        values: [REPLY, now, t.turnId, t.conversationId, t.deploymentId],
      });
      if (!moved.rowCount) throw new Error(`turn ${t.turnId} not found`);
      const { rows } = await client.query({ name: 'floor_conversation', text: 'UPDATE conversations SET last_seq = last_seq + 1, updated_at = $1 WHERE id = $2 RETURNING last_seq', values: [now, t.conversationId] });
      const seq = Number(rows[0].last_seq);
      await client.query({ name: 'floor_event', text: 'INSERT INTO conversation_events (conversation_id, seq, type, frame, created_at) VALUES ($1, $2, $3, $4, $5)', values: [t.conversationId, seq, 'reply', frameOf(t.turnId, seq), now] });
      await client.query('COMMIT');
      await client.query(`NOTIFY concierge_floor, '${t.conversationId}'`);
      samples.push(performance.now() - started);
    }
  } finally {
    await client.end();
  }
  return summary(samples);
}

/**
 * The same statements as the service runs them for a reply: one unit of work (turnLifecycle's
 * resolve, through Kysely's asynchronous transaction and the service's compiled statements), on
 * the service's own file, one transaction per reply (ms). Against {@link sqliteReplyFloor} it
 * bounds what running a batch synchronously on better-sqlite3 could save a reply.
 */
export async function sqliteReplyUnit(file: string, turns: readonly ResolvedTurn[]): Promise<Latency> {
  const store = await openStore({ databaseUrl: undefined, dataDir: dirname(file) });
  const samples: number[] = [];
  try {
    await store.db.updateTable('turns').set({ status: 'acknowledged', reply_text: null, resolved_at: null, reply_received_at: null }).where('id', 'in', turns.map((t) => t.turnId)).execute();
    for (const t of turns) {
      // Only what a reply's unit reads of its deployment: without a transcript hook, no outbox row.
      const dep = { id: t.deploymentId, transcriptHookUrl: undefined } as DeploymentContext;
      const started = performance.now();
      const moved = await store.db.transaction().execute((trx) =>
        turnLifecycle.resolve(new UnitOfWork(trx), { dep, conversationId: t.conversationId }, { turnId: t.turnId, conversationId: t.conversationId, deploymentId: t.deploymentId }, { text: REPLY, actions: [] }),
      );
      samples.push(performance.now() - started);
      if (moved !== 'stored') throw new Error(`turn ${t.turnId}: ${moved}`);
    }
  } finally {
    await store.close();
  }
  return summary(samples);
}
