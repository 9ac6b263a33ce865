import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { z } from 'zod';
import { AppError } from '../errors.js';
import { randomBase62, newId } from '../shared/random.js';
import { isoIn, isoNow } from '../shared/time.js';
import type { Db } from '../store/database.js';
import type { StoreHealth } from '../store/store-health.js';
import type { WriteBatcher } from '../store/write-batcher.js';
import {
  appendEvents,
  claimTurn,
  conversationsStartedSince,
  type ConversationRow,
  type DueTurns,
  dueTurns,
  findConversation,
  findTurnByClientId,
  failOpenTurns,
  findTurnOf,
  framesAfter,
  insertConversation,
  insertOutbox,
  insertTurn,
  type NewEvent,
  openConversationIds,
  type StoredFrame,
  transitionTurn,
  turnLoad,
  type TurnRow,
} from './conversation.repository.js';
import type { EndReason, TurnFailure, TurnMode, TurnStatus } from './conversation.table.js';
import type { ConversationBus } from './conversation-bus.js';
import type { DeploymentContext, DeploymentDirectory } from './deployment-context.js';
import { type EgressPolicy, postJson } from './egress.js';
import { signatureOf, verifySignature } from './signature.js';
import { callTurnHook, type HookOutcome } from './turn-hook.js';
import type { UserClaims } from './user-token.js';

/** A turn left `pending` this long had its hook call cut off by a crash: it is failed. */
const STALE_PENDING_MS = 120_000;
/**
 * A customer may answer the hook 202 and post the reply at once; the reply can then arrive
 * before the acknowledgement commits. It waits this long for the turn to leave `pending`.
 */
const PENDING_REPLY_WAIT_MS = 2_000;
const OPEN_TURN_STATUSES: TurnStatus[] = ['pending', 'acknowledged'];
const NEW_CONVERSATION_WINDOW_MS = 10 * 60_000;
/** How long a shutdown waits for hook calls in flight: a hook that answers at once, as it should, is never cut off. */
const SHUTDOWN_GRACE_MS = 5_000;

export const replyBody = z
  .strictObject({
    conversation_id: z.uuid(),
    turn_id: z.uuid(),
    reply_text: z.string().min(1).max(10_000),
  })
  .meta({ id: 'DeferredReply' });
export type ReplyInput = z.infer<typeof replyBody>;

export interface ConciergeOptions {
  db: Db;
  /** Every state change goes through it, so changes asked for while one commits share the next commit. */
  writes: WriteBatcher;
  deployments: DeploymentDirectory;
  /** PostgreSQL: the sweeper's claims skip rows another node holds. */
  skipLocked: boolean;
  bus: ConversationBus;
  egress: EgressPolicy;
  logger: Logger;
  /** Changes that must not be lost (a hook's answer) are retried through it while the store is down. */
  health: StoreHealth;
  /** Base of the `reply_url` in hook calls; known once the server listens. */
  publicBaseUrl(): string;
  hookRetryDelaysMs?: readonly number[];
  /** After a commit that stored transcript events. */
  onTranscript?(): void;
}

export type ConversationStart = { outcome: 'started'; conversation: ConversationRow } | { outcome: 'refused'; message: string };

export type TurnSubmission =
  | { outcome: 'accepted' | 'duplicate'; turnId: string }
  | { outcome: 'refused'; code: 'rate_limited' | 'too_many_pending_turns' | 'conversation_ended'; message: string }
  | { outcome: 'ended' };

export interface TurnInput {
  client_turn_id: string;
  text: string;
  mode: TurnMode;
}

/** One state change's writes: widget events, transcript events, and what else the caller adds. */
interface Change {
  events: NewEvent[];
  transcript: { type: string; data: Record<string, unknown> }[];
}

/** What a transaction stored, announced once it commits. */
interface Written {
  frames: Map<string, StoredFrame[]>;
  transcript: boolean;
}

/**
 * The rules of conversations and turns. Every state change is atomic with the widget events
 * and transcript events it causes (one unit of a group commit); sockets are told after the commit.
 */
export class Concierge {
  private readonly inFlight = new Set<Promise<unknown>>();
  /**
   * Aborted when a shutdown has waited long enough: hook calls still in flight are cut off (their
   * turns fail, so the visitor may ask again) and writes waiting for the store give up.
   */
  private readonly stopping = new AbortController();

  constructor(private readonly o: ConciergeOptions) {
    // Every hook call in flight listens to it: hundreds at once are normal, not a leak.
    setMaxListeners(0, this.stopping.signal);
  }

  deployment(id: string): Promise<DeploymentContext | undefined> {
    return this.o.deployments.get(id);
  }

  /** After any management change to a deployment: read it afresh, and end its conversations if it is no longer active. */
  async deploymentChanged(id: string): Promise<void> {
    const dep = await this.o.deployments.fresh(id);
    if (dep?.status !== 'inactive') return;
    for (const conversationId of await openConversationIds(this.o.db, id)) await this.endConversation(dep, conversationId, 'deployment_inactive');
  }

  conversation(id: string): Promise<ConversationRow | undefined> {
    return findConversation(this.o.db, id);
  }

  framesAfter(conversationId: string, seq: number, limit: number) {
    return framesAfter(this.o.db, conversationId, seq, limit);
  }

  /**
   * Starts a conversation for the token's user; `outbound` stores the greeting as its first event.
   * Refused when the user has started `perTenMinutes` on this deployment in the last 10 minutes:
   * each start costs the customer's server a conversation, so one token may not mint them freely.
   */
  async startConversation(dep: DeploymentContext, claims: UserClaims, perTenMinutes: number): Promise<ConversationStart> {
    const now = isoNow();
    const row: ConversationRow = {
      id: newId(),
      deployment_id: dep.id,
      user_sub: claims.sub,
      user_name: claims.name ?? null,
      user_ctx: claims.ctx ? JSON.stringify(claims.ctx) : null,
      status: 'open',
      last_seq: 0,
      turn_count: 0,
      created_at: now,
      updated_at: now,
    };
    const greeting = dep.callDirection === 'outbound' && dep.agent.greeting ? dep.agent.greeting : null;
    // Keyed by the user, not the new id: one user's starts on this node are counted one at a time.
    return this.write(`start:${dep.id}:${claims.sub}`, async (trx, written): Promise<ConversationStart> => {
      if ((await conversationsStartedSince(trx, dep.id, claims.sub, isoIn(-NEW_CONVERSATION_WINDOW_MS))) >= perTenMinutes) {
        return { outcome: 'refused', message: `At most ${perTenMinutes} new conversations per user every 10 minutes; resume an open one instead` };
      }
      await insertConversation(trx, row);
      await this.record(trx, written, dep, row.id, {
        events: greeting ? [{ type: 'greeting', body: { text: greeting } }] : [],
        transcript: [{ type: 'conversation.started', data: { user: { sub: claims.sub, name: claims.name ?? null }, call_direction: dep.callDirection } }],
      });
      return { outcome: 'started', conversation: { ...row, last_seq: greeting ? 1 : 0 } };
    });
  }

  async submitTurn(dep: DeploymentContext, conversationId: string, input: TurnInput): Promise<TurnSubmission> {
    const result = await this.write(conversationId, async (trx, written): Promise<TurnSubmission & { started?: [ConversationRow, TurnRow] }> => {
      const conversation = await lockConversation(trx, conversationId);
      if (conversation.status !== 'open') return { outcome: 'refused', code: 'conversation_ended', message: 'The conversation has ended' };
      const existing = await findTurnByClientId(trx, conversationId, input.client_turn_id);
      if (existing) return { outcome: 'duplicate', turnId: existing.id };
      if (conversation.turn_count >= dep.maxTurnsPerConversation) {
        await this.end(trx, written, dep, conversationId, 'max_turns');
        return { outcome: 'ended' };
      }
      const load = await turnLoad(trx, conversationId, OPEN_TURN_STATUSES, isoIn(-60_000));
      if (load.waiting >= dep.maxPendingTurns) {
        return { outcome: 'refused', code: 'too_many_pending_turns', message: `At most ${dep.maxPendingTurns} turns may wait for a reply` };
      }
      if (load.recent >= dep.turnsPerMinute) {
        return { outcome: 'refused', code: 'rate_limited', message: `At most ${dep.turnsPerMinute} turns a minute` };
      }
      const now = isoNow();
      const turn: TurnRow = {
        id: newId(),
        conversation_id: conversationId,
        client_turn_id: input.client_turn_id,
        text: input.text,
        mode: input.mode,
        status: 'pending',
        delivery_id: newId(),
        reply_text: null,
        failure_reason: null,
        expires_at: null,
        created_at: now,
        updated_at: now,
      };
      await insertTurn(trx, turn);
      const accepted = { turn_id: turn.id, client_turn_id: turn.client_turn_id, text: turn.text, mode: turn.mode };
      await this.record(
        trx,
        written,
        dep,
        conversationId,
        { events: [{ type: 'turn_accepted', body: accepted }], transcript: [{ type: 'turn.created', data: accepted }] },
        { turn_count: conversation.turn_count + 1 },
      );
      return { outcome: 'accepted', turnId: turn.id, started: [conversation, turn] };
    });
    if (result.started) this.track(this.runHook(dep, ...result.started));
    const { started: _started, ...submission } = result;
    return submission;
  }

  async endConversation(dep: DeploymentContext, conversationId: string, reason: EndReason): Promise<void> {
    await this.write(conversationId, async (trx, written) => {
      const conversation = await lockConversation(trx, conversationId);
      if (conversation.status === 'open') await this.end(trx, written, dep, conversationId, reason);
    });
  }

  /** The deployment a deferred reply names, once its signature over these exact bytes verifies. */
  async verifyReply(deploymentId: string, raw: Buffer, signature: string | undefined): Promise<DeploymentContext> {
    // A reply signed with a secret just rotated on another node verifies here too (see accepting).
    const found = await this.o.deployments.accepting(deploymentId, (dep) => verifySignature(signature, raw, dep.secrets));
    if (!found) throw new AppError('not_found', 'Deployment not found');
    if (!found.accepted) throw new AppError('invalid_signature', 'X-Service-Signature must be sha256=<lowercase hex HMAC-SHA256 of the raw body> under the signing secret');
    return found.dep;
  }

  /** Resolves an acknowledged turn with a verified reply; stored before this returns, so a 202 loses nothing. */
  async acceptReply(dep: DeploymentContext, reply: ReplyInput): Promise<{ turn_id: string; duplicate: boolean }> {
    const { conversation_id, turn_id, reply_text } = reply;
    const scope = { turnId: turn_id, conversationId: conversation_id, deploymentId: dep.id };
    const deadline = Date.now() + PENDING_REPLY_WAIT_MS;
    for (;;) {
      const resolved = await this.write(conversation_id, async (trx, written) => {
        const moved = await transitionTurn(trx, scope, 'acknowledged', 'resolved', { reply_text });
        if (moved) await this.record(trx, written, dep, conversation_id, resolvedChange(turn_id, reply_text, false));
        return Boolean(moved);
      });
      if (resolved) return { turn_id, duplicate: false };
      // Not acknowledged (any more): say why, from the turn as it is now.
      const change = this.nextChange(conversation_id, deadline - Date.now());
      const current = await findTurnOf(this.o.db, scope);
      if (current?.status === 'pending' && Date.now() < deadline) {
        await change.happened;
        continue;
      }
      change.cancel();
      // Acknowledged between the attempt and the read: try again.
      if (current?.status === 'acknowledged') continue;
      if (!current) throw new AppError('turn_not_found', 'No such turn in that conversation of this deployment');
      if (current.status === 'pending') throw new AppError('turn_not_acknowledged', 'The turn has not been acknowledged yet: the hook call is still in flight');
      if (current.status === 'failed' || current.status === 'expired') throw new AppError('turn_not_pending', `The turn is ${current.status}; it takes no reply`);
      if (current.reply_text === reply_text) return { turn_id, duplicate: true };
      throw new AppError('turn_already_resolved', 'The turn was already resolved with a different reply_text');
    }
  }

  /**
   * Expires acknowledged turns past their reply timeout, and fails turns whose hook call a crash
   * cut off. Each turn is claimed inside the transaction that moves it (on PostgreSQL with
   * `FOR UPDATE SKIP LOCKED`), and moved only if still in its state, so of several nodes exactly one acts.
   */
  async sweep(limit = 100): Promise<number> {
    const expired = await this.sweepDue({ status: 'acknowledged', column: 'expires_at', before: isoNow(), limit }, 'expired', 'reply_timeout');
    const stale = await this.sweepDue({ status: 'pending', column: 'created_at', before: isoIn(-STALE_PENDING_MS), limit }, 'failed', 'hook_failed');
    return expired + stale;
  }

  /**
   * Graceful shutdown: waits up to `graceMs` for hook calls in flight and the writes of their
   * answers, then cuts off the rest. A hook call cut off fails its turn (`hook_failed`); a write
   * the store never took leaves its turn `pending`, for the stale-pending sweep of the next start.
   */
  async drain(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    const cut = setTimeout(() => this.stopping.abort(), graceMs);
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
    clearTimeout(cut);
  }

  /**
   * Runs one state change, keyed by what it locks (a conversation id), in a group commit and, once
   * committed, hands the stored frames to the sockets and wakes transcript delivery.
   */
  private async write<T>(key: string, work: (trx: Db, written: Written) => Promise<T>): Promise<T> {
    const { result, written } = await this.o.writes.run(key, async (trx) => {
      const written: Written = { frames: new Map(), transcript: false };
      return { result: await work(trx, written), written };
    });
    for (const [conversationId, frames] of written.frames) this.o.bus.publish(conversationId, frames);
    if (written.transcript) this.o.onTranscript?.();
    return result;
  }

  /** Resolves when the conversation stores something, or after `ms`; subscribed from the call on. */
  private nextChange(conversationId: string, ms: number): { happened: Promise<void>; cancel(): void } {
    let cancel = () => {};
    const happened = new Promise<void>((resolve) => {
      const timer = setTimeout(() => cancel(), Math.max(ms, 0));
      const unsubscribe = this.o.bus.subscribe(conversationId, () => cancel());
      cancel = () => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
    });
    return { happened, cancel: () => cancel() };
  }

  private track(work: Promise<unknown>): void {
    // A hook answer the store never took (a stop during an outage) is an outage, logged once like the rest.
    const tracked = work.catch((err) => void this.o.health.failed(err, 'turn processing')).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async sweepDue(due: DueTurns, to: TurnStatus, reason: TurnFailure): Promise<number> {
    // Contexts are read before the writes: a unit of a batch touches only its own transaction.
    const moves = await Promise.all(
      (await dueTurns(this.o.db, due)).map(async (turn) => {
        const dep = await this.deployment(turn.deployment_id);
        if (!dep) return false;
        // One unit per turn, keyed by its conversation like every other change, so the lock order holds.
        return this.write(turn.conversation_id, async (trx, written) => {
          if (!(await claimTurn(trx, turn.id, due.status, this.o.skipLocked))) return false;
          const row = await transitionTurn(trx, turn.id, due.status, to, { failure_reason: reason });
          if (row) await this.record(trx, written, dep, row.conversation_id, failedChange(row.id, reason));
          return Boolean(row);
        });
      }),
    );
    return moves.filter(Boolean).length;
  }

  private async runHook(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow): Promise<void> {
    const outcome: HookOutcome = dep.hookUrl
      ? await callTurnHook(() => this.postTurn(dep, conversation, turn), this.o.hookRetryDelaysMs, this.stopping.signal)
      : { kind: 'failed', cause: 'no hook_url' };
    if (outcome.kind === 'failed') this.o.logger.warn({ turn_id: turn.id, deployment_id: dep.id, cause: outcome.cause }, 'turn hook failed');
    // The customer has answered: its answer is kept through a store outage, not left to the sweep.
    const store = () => this.write(turn.conversation_id, async (trx, written) => {
      if (outcome.kind === 'replied') {
        const row = await transitionTurn(trx, turn.id, 'pending', 'resolved', { reply_text: outcome.text });
        if (row) await this.record(trx, written, dep, turn.conversation_id, resolvedChange(turn.id, outcome.text, true));
        return;
      }
      if (outcome.kind === 'acknowledged') {
        const row = await transitionTurn(trx, turn.id, 'pending', 'acknowledged', { expires_at: isoIn(dep.replyTimeoutS * 1000) });
        if (row) await this.record(trx, written, dep, turn.conversation_id, acknowledgedChange(turn.id));
        return;
      }
      const reason = outcome.kind === 'rejected' ? 'hook_rejected' : 'hook_failed';
      const row = await transitionTurn(trx, turn.id, 'pending', 'failed', { failure_reason: reason });
      if (row) await this.record(trx, written, dep, turn.conversation_id, failedChange(turn.id, reason));
    });
    await this.o.health.persist("storing the hook's answer", store, this.stopping.signal);
  }

  /**
   * Ends an open conversation: its turns still waiting (pending or acknowledged) fail first, each
   * with its `turn_failed`, so no reply can resolve a turn of an ended conversation.
   */
  private async end(trx: Db, written: Written, dep: DeploymentContext, conversationId: string, reason: EndReason): Promise<void> {
    const failed = await failOpenTurns(trx, conversationId, OPEN_TURN_STATUSES, 'conversation_ended');
    const change: Change = { events: [], transcript: [] };
    for (const turnId of failed) {
      const one = failedChange(turnId, 'conversation_ended');
      change.events.push(...one.events);
      change.transcript.push(...one.transcript);
    }
    change.events.push({ type: 'conversation_ended', body: { reason } });
    change.transcript.push({ type: 'conversation.ended', data: { reason } });
    await this.record(trx, written, dep, conversationId, change, { status: 'ended' });
  }

  private postTurn(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow) {
    const body = JSON.stringify({
      type: 'turn.created',
      delivery_id: turn.delivery_id,
      sent_at: isoNow(),
      deployment_id: dep.id,
      agent_id: dep.agentId,
      conversation_id: conversation.id,
      turn_id: turn.id,
      user: { sub: conversation.user_sub, name: conversation.user_name, ctx: conversation.user_ctx ? JSON.parse(conversation.user_ctx) : null },
      text: turn.text,
      mode: turn.mode,
      reply_url: `${this.o.publicBaseUrl()}/embed/concierge/${dep.id}/replies`,
    });
    const headers = { 'X-Service-Signature': signatureOf(dep.signingSecret, body), 'X-Service-Delivery': turn.delivery_id };
    return postJson(dep.hookUrl!, body, headers, dep.hookTimeoutMs, this.o.egress, this.stopping.signal);
  }

  /** Stores a change's widget events (next seqs) and, with a transcript hook, its transcript events. */
  private async record(
    trx: Db,
    written: Written,
    dep: DeploymentContext,
    conversationId: string,
    change: Change,
    patch: Parameters<typeof appendEvents>[3] = {},
  ): Promise<void> {
    const { first, frames } = await appendEvents(trx, conversationId, change.events, patch);
    if (frames.length) {
      const known = written.frames.get(conversationId);
      if (known) known.push(...frames);
      else written.frames.set(conversationId, frames);
    }
    if (!dep.transcriptHookUrl || !change.transcript.length) return;
    written.transcript = true;
    const now = isoNow();
    // Ordered with the widget events: a change without any sorts before the next one.
    let position = (first + change.events.length - 1) * 100 + 50;
    for (const event of change.transcript) {
      const id = `evt_${randomBase62(24)}`;
      const body = JSON.stringify({ id, type: event.type, created_at: now, deployment_id: dep.id, conversation_id: conversationId, data: event.data });
      await insertOutbox(trx, {
        id,
        deployment_id: dep.id,
        conversation_id: conversationId,
        position: position++,
        body,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        lease_expires_at: null,
        created_at: now,
      });
    }
  }
}

/** Takes the conversation's row lock first, so one conversation's changes happen one at a time. */
async function lockConversation(trx: Db, id: string): Promise<ConversationRow> {
  return trx.updateTable('conversations').set({ updated_at: isoNow() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

const acknowledgedChange = (turnId: string): Change => ({
  events: [{ type: 'turn_acknowledged', body: { turn_id: turnId } }],
  transcript: [{ type: 'turn.acknowledged', data: { turn_id: turnId } }],
});

function resolvedChange(turnId: string, text: string, alsoAcknowledged: boolean): Change {
  const ack = alsoAcknowledged ? acknowledgedChange(turnId) : { events: [], transcript: [] };
  return {
    events: [...ack.events, { type: 'reply', body: { turn_id: turnId, text } }],
    transcript: [...ack.transcript, { type: 'turn.resolved', data: { turn_id: turnId, reply_text: text } }],
  };
}

const failedChange = (turnId: string, reason: TurnFailure): Change => ({
  events: [{ type: 'turn_failed', body: { turn_id: turnId, reason } }],
  transcript: [{ type: 'turn.failed', data: { turn_id: turnId, reason } }],
});
