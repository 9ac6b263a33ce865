import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { quantile } from '../stats.js';
import { turnLifecycle } from '../../server/src/concierge/conversations/turn.lifecycle.js';
import { loadDeploymentContext } from '../../server/src/deployments/deployment-context.js';
import { UnitOfWork } from '../../server/src/concierge/events/event.recorder.js';
import { openStore } from '../../server/src/store/db.js';
import { AnalyticsRollup, hourOf } from '../../server/src/concierge/analytics/analytics.rollup.js';
import { binOf } from '../../server/src/concierge/analytics/latency-bins.js';
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
const frameOf = (turnId: string, seq: number) =>
  JSON.stringify({ type: 'reply', seq, turn_id: turnId, text: REPLY, actions: [] });

function summary(samples: number[]): Latency {
  const measured = samples.slice(Math.floor(samples.length / 10));
  return { p50: quantile(measured, 0.5), p99: quantile(measured, 0.99) };
}

/** A reply's statements, prepared once, run for one turn at a time: what the floors store. */
export interface ReplyWriter {
  write(turn: ResolvedTurn): void | Promise<void>;
  close(): void | Promise<void>;
}

/** The reply's turn move, as the service writes it (the same columns set, the same ones read back). */
const moveSql = (p: (n: number) => string) =>
  `UPDATE turns SET status = 'resolved', updated_at = ${p(1)}, replied_by = NULL, reply_actions = NULL, reply_chars = ${p(2)},
     reply_received_at = ${p(1)}, reply_text = ${p(3)}, resolved_at = ${p(1)}
   WHERE id = ${p(4)} AND conversation_id = ${p(5)} AND EXISTS (SELECT id FROM conversations WHERE id = ${p(5)} AND deployment_id = ${p(6)})
     AND status = 'acknowledged'
   RETURNING status, created_at, resolved_at, first_part_at, failure_reason`;

/**
 * What the service's analytics rollup adds with each reply (README, Knowing how it goes): the reply's
 * latency bin (a reply moves none of its hour's counts, so that row is not written).
 */
const latencySql = (p: (n: number) => string) =>
  `INSERT INTO analytics_latency (deployment_id, hour, metric, bin, customer_id, agent_id, count)
     VALUES (${p(1)}, ${p(2)}, 'reply', ${p(3)}, ${p(4)}, ${p(5)}, 1)
     ON CONFLICT (deployment_id, hour, metric, bin) DO UPDATE SET count = analytics_latency.count + excluded.count`;

/** The rollup's keys for a reply to a turn taken at `createdAt`: the hour it was taken, the bin of how long it took. */
const rollupKeys = (createdAt: string, now: string) => ({
  hour: hourOf(createdAt),
  bin: binOf(Date.parse(now) - Date.parse(createdAt)),
});

interface Owner {
  customer_id: string;
  agent_id: string;
}

/**
 * The reply's statements on SQLite in a bare better-sqlite3 transaction (the turn's move, the
 * conversation's next seq, the widget event, the rollup's latency bin), prepared once, on the service's
 * own file with its pragmas and triggers. The turns are put back to `acknowledged` first (untimed).
 */
export function sqliteReplyWriter(file: string, turns: readonly ResolvedTurn[]): ReplyWriter {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Named parameters: a statement uses some values twice.
  const p = (n: number) => `@p${n}`;
  const named = (...values: unknown[]) => Object.fromEntries(values.map((v, i) => [`p${i + 1}`, v]));
  const turn = db.prepare(moveSql(p));
  const reopen = db.prepare(
    `UPDATE turns SET status = 'acknowledged', reply_text = NULL, resolved_at = NULL, reply_received_at = NULL WHERE id = ?`,
  );
  db.transaction(() => {
    for (const t of turns) reopen.run(t.turnId);
  })();
  const owners = new Map(
    [...new Set(turns.map((t) => t.deploymentId))].map((id) => [
      id,
      db.prepare('SELECT customer_id, agent_id FROM deployments WHERE id = ?').get(id) as Owner,
    ]),
  );
  const conversation = db.prepare(
    'UPDATE conversations SET last_seq = last_seq + 1, updated_at = ? WHERE id = ? RETURNING last_seq',
  );
  const event = db.prepare(
    'INSERT INTO conversation_events (conversation_id, seq, type, frame, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const latency = db.prepare(latencySql(p));
  const reply = db.transaction((t: ResolvedTurn) => {
    const now = new Date().toISOString();
    const moved = turn.get(named(now, REPLY.length, REPLY, t.turnId, t.conversationId, t.deploymentId)) as
      { created_at: string } | undefined;
    if (!moved) throw new Error(`turn ${t.turnId} not found`);
    const { last_seq: seq } = conversation.get(now, t.conversationId) as { last_seq: number };
    event.run(t.conversationId, seq, 'reply', frameOf(t.turnId, seq), now);
    const { customer_id, agent_id } = owners.get(t.deploymentId)!;
    const { hour, bin } = rollupKeys(moved.created_at, now);
    latency.run(named(t.deploymentId, hour, bin, customer_id, agent_id));
  });
  return { write: (t) => reply(t), close: () => void db.close() };
}

/**
 * The same on PostgreSQL with a bare `pg` client: BEGIN, the four statements (named, so prepared
 * once), COMMIT, then NOTIFY, one round trip each.
 */
export async function pgReplyWriter(url: string, turns: readonly ResolvedTurn[]): Promise<ReplyWriter> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `UPDATE turns SET status = 'acknowledged', reply_text = NULL, resolved_at = NULL, reply_received_at = NULL WHERE id = ANY($1)`,
    [turns.map((t) => t.turnId)],
  );
  const owners = new Map<string, Owner>();
  for (const id of new Set(turns.map((t) => t.deploymentId))) {
    const { rows } = await client.query<Owner>('SELECT customer_id, agent_id FROM deployments WHERE id = $1', [id]);
    owners.set(id, rows[0]!);
  }
  const p = (n: number) => `$${n}`;
  return {
    async write(t) {
      const now = new Date().toISOString();
      await client.query('BEGIN');
      const moved = await client.query<{ created_at: string }>({
        name: 'floor_turn',
        text: moveSql(p),
        values: [now, REPLY.length, REPLY, t.turnId, t.conversationId, t.deploymentId],
      });
      if (!moved.rowCount) throw new Error(`turn ${t.turnId} not found`);
      const { rows } = await client.query({
        name: 'floor_conversation',
        text: 'UPDATE conversations SET last_seq = last_seq + 1, updated_at = $1 WHERE id = $2 RETURNING last_seq',
        values: [now, t.conversationId],
      });
      const seq = Number(rows[0].last_seq);
      await client.query({
        name: 'floor_event',
        text: 'INSERT INTO conversation_events (conversation_id, seq, type, frame, created_at) VALUES ($1, $2, $3, $4, $5)',
        values: [t.conversationId, seq, 'reply', frameOf(t.turnId, seq), now],
      });
      const { customer_id, agent_id } = owners.get(t.deploymentId)!;
      const { hour, bin } = rollupKeys(moved.rows[0]!.created_at, now);
      await client.query({
        name: 'floor_latency',
        text: latencySql(p),
        values: [t.deploymentId, hour, bin, customer_id, agent_id],
      });
      await client.query('COMMIT');
      await client.query(`NOTIFY concierge_floor, '${t.conversationId}'`);
    },
    close: () => client.end(),
  };
}

/** A writer for `store`: a SQLite file's path, or a `postgres://` URL. */
export const replyWriterFor = (store: string, turns: readonly ResolvedTurn[]): ReplyWriter | Promise<ReplyWriter> =>
  /^postgres(ql)?:/.test(store) ? pgReplyWriter(store, turns) : sqliteReplyWriter(store, turns);

/** Each turn's reply written alone, timed (ms): the store's floor for one reply, without the hops. */
export async function storeReplyFloor(store: string, turns: readonly ResolvedTurn[]): Promise<Latency> {
  const writer = await replyWriterFor(store, turns);
  const samples: number[] = [];
  try {
    for (const t of turns) {
      const started = performance.now();
      await writer.write(t);
      samples.push(performance.now() - started);
    }
  } finally {
    await writer.close();
  }
  return summary(samples);
}

/**
 * The same statements as the service runs them for a reply: one unit of work (turnLifecycle's
 * resolve and the analytics rollup written last, in the write batch's own transaction on the
 * connection, its compiled statements run straight there, as the service runs them), on
 * the service's own file, one transaction per reply (ms). Against {@link sqliteReplyFloor} it
 * bounds what running a batch synchronously on better-sqlite3 could save a reply.
 */
export async function sqliteReplyUnit(file: string, turns: readonly ResolvedTurn[]): Promise<Latency> {
  const store = await openStore({ databaseUrl: undefined, dataDir: dirname(file) });
  const samples: number[] = [];
  try {
    await store.db
      .updateTable('turns')
      .set({ status: 'acknowledged', reply_text: null, resolved_at: null, reply_received_at: null })
      .where(
        'id',
        'in',
        turns.map((t) => t.turnId),
      )
      .execute();
    const deployments = new Map(
      await Promise.all(
        [...new Set(turns.map((t) => t.deploymentId))].map(
          async (id) => [id, await loadDeploymentContext(store.db, id)] as const,
        ),
      ),
    );
    const rollup = new AnalyticsRollup();
    for (const t of turns) {
      const dep = deployments.get(t.deploymentId);
      if (!dep) throw new Error(`deployment ${t.deploymentId} not found`);
      const started = performance.now();
      const moved = await store.direct!(async (trx) => {
        const taken = await turnLifecycle.resolve(
          new UnitOfWork(trx, 'sqlite', rollup),
          { dep, conversationId: t.conversationId },
          { turnId: t.turnId, conversationId: t.conversationId, deploymentId: t.deploymentId },
          { text: REPLY, actions: [] },
        );
        await rollup.write(trx);
        return taken;
      });
      samples.push(performance.now() - started);
      if (moved !== 'stored') throw new Error(`turn ${t.turnId}: ${moved}`);
    }
  } finally {
    await store.close();
  }
  return summary(samples);
}

/** Whose conversations the durable throughput floor stores: rows of the service's own store. */
export interface FloorOwner {
  customerId: string;
  deploymentId: string;
  agentId: string;
}

/** The statements of a turn's life, as the service commits them, each step in a transaction of its own. */
export interface TurnWriter {
  open(conversationId: string, sub: string): void;
  take(conversationId: string, turnId: string, clientTurnId: string, text: string): void;
  acknowledge(conversationId: string, turnId: string, hookUrl: string, durationMs: number): void;
  resolve(conversationId: string, turnId: string, text: string): void;
  close(): void;
}

/**
 * The throughput floor's store on SQLite, in bare better-sqlite3 transactions on the service's own
 * file: a conversation opened, a turn taken (row, next seq, `turn_accepted`), acknowledged (state,
 * next seq, `turn_acknowledged`, the hook call's delivery record) and resolved (state, next seq,
 * `reply`): the rows the service writes for a turn, without its analytics tallies.
 */
export function sqliteTurnWriter(file: string, owner: FloorOwner): TurnWriter {
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  const conversation = db.prepare(
    `INSERT INTO conversations (id, customer_id, deployment_id, agent_id, user_sub, status, last_seq, turn_count, handler, needs_person, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'open', 0, 0, 'agent', 0, ?, ?)`,
  );
  const turn = db.prepare(
    `INSERT INTO turns (id, conversation_id, client_turn_id, text, mode, language, status, delivery_id, reply_duplicates, part_chars, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'text', 'en-US', 'pending', ?, 0, 0, ?, ?)`,
  );
  const next = db.prepare(
    'UPDATE conversations SET last_seq = last_seq + 1, turn_count = turn_count + ?, updated_at = ? WHERE id = ? RETURNING last_seq',
  );
  const event = db.prepare(
    'INSERT INTO conversation_events (conversation_id, seq, type, frame, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const acknowledged = db.prepare(
    `UPDATE turns SET status = 'acknowledged', acknowledged_at = ?, expires_at = ?, updated_at = ? WHERE id = ? AND status = 'pending'`,
  );
  const delivery = db.prepare(
    `INSERT INTO deliveries (id, customer_id, deployment_id, conversation_id, turn_id, event_id, kind, event_type, url, attempt, sent_at, duration_ms, request, response, error, error_detail, outcome, manual)
     VALUES (?, ?, ?, ?, ?, NULL, 'turn_hook', 'turn.created', ?, 1, ?, ?, ?, ?, NULL, NULL, 'acknowledged', 0)`,
  );
  const resolved = db.prepare(
    `UPDATE turns SET status = 'resolved', reply_text = ?, resolved_at = ?, reply_received_at = ?, updated_at = ? WHERE id = ? AND status = 'acknowledged'`,
  );
  const told = (conversationId: string, now: string, frame: (seq: number) => object, turns = 0) => {
    const { last_seq: seq } = next.get(turns, now, conversationId) as { last_seq: number };
    const body = frame(seq) as { type: string };
    event.run(conversationId, seq, body.type, JSON.stringify(body), now);
  };
  const steps = {
    take: db.transaction((conversationId: string, turnId: string, clientTurnId: string, text: string) => {
      const now = new Date().toISOString();
      turn.run(turnId, conversationId, clientTurnId, text, randomUUID(), now, now);
      told(
        conversationId,
        now,
        (seq) => ({
          type: 'turn_accepted',
          seq,
          turn_id: turnId,
          client_turn_id: clientTurnId,
          text,
          mode: 'text',
          language: 'en-US',
        }),
        1,
      );
    }),
    acknowledge: db.transaction((conversationId: string, turnId: string, hookUrl: string, durationMs: number) => {
      const now = new Date().toISOString();
      acknowledged.run(now, new Date(Date.now() + 3_600_000).toISOString(), now, turnId);
      told(conversationId, now, (seq) => ({ type: 'turn_acknowledged', seq, turn_id: turnId }));
      delivery.run(
        randomUUID(),
        owner.customerId,
        owner.deploymentId,
        conversationId,
        turnId,
        hookUrl,
        now,
        durationMs,
        JSON.stringify({ headers: {}, body: turnId }),
        JSON.stringify({ status: 202, headers: {}, body: '', truncated: false }),
      );
    }),
    resolve: db.transaction((conversationId: string, turnId: string, text: string) => {
      const now = new Date().toISOString();
      resolved.run(text, now, now, now, turnId);
      told(conversationId, now, (seq) => ({ type: 'reply', seq, turn_id: turnId, text, actions: [] }));
    }),
  };
  return {
    open: (conversationId, sub) => {
      const now = new Date().toISOString();
      conversation.run(conversationId, owner.customerId, owner.deploymentId, owner.agentId, sub, now, now);
    },
    take: (...args) => steps.take(...args),
    acknowledge: (...args) => steps.acknowledge(...args),
    resolve: (...args) => steps.resolve(...args),
    close: () => void db.close(),
  };
}
