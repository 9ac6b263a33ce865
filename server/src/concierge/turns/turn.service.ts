import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { PublicAddress } from '../../http/public-address.js';
import { isoIn } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import { SILENT_AFTER_MS } from '../../nodes/node-heartbeat.js';
import type { Db } from '../../database.js';
import { type ConversationRow, findConversation, lockConversation } from '../conversations/conversation.repository.js';
import type { Heard } from '../conversations/heard.js';
import { type Feedback, type TurnInput, turnLifecycle } from '../conversations/turn.lifecycle.js';
import {
  findTurnByClientId,
  heardBefore,
  orphanedPendingTurns,
  takeOverHookCall,
  turnExists,
  turnLoad,
  type TurnRow,
} from '../conversations/turn.repository.js';
import type { DeploymentContext, DeploymentDirectory } from '../deployment-context.js';
import type { EgressPolicy } from '../egress.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { deliveryRow, unreadableAnswer } from '../deliveries/delivery.record.js';
import { insertDeliveries } from '../deliveries/delivery.repository.js';
import { callTurnHook, HOOK_RETRY_DELAYS_MS, type HookCall, sendTurnCreated } from '../deliveries/hook.client.js';

export type { TurnInput };

/** A turn taken (or recognised as a resend), refused with the reason the widget is told, the conversation ended by it, or gone (erased). */
export type TurnSubmission =
  | { outcome: 'accepted' | 'duplicate'; turnId: string }
  | { outcome: 'refused'; error: AppError }
  | { outcome: 'ended' | 'gone' };

export interface TurnServiceParts {
  db: Db;
  /** This node (see NodeHeartbeat): the turns it takes are its to call the hook for. */
  nodeId: string;
  deployments: DeploymentDirectory;
  conversations: ConversationService;
  events: EventRecorder;
  egress: EgressPolicy;
  logger: Logger;
  /** The hook's answer is retried through it while the store is down. */
  health: StoreHealth;
  /** Base of the `reply_url` in hook calls. */
  address: PublicAddress;
}

export interface TurnServiceSettings {
  /** Waits before the second and third hook attempts. */
  hookRetryDelaysMs: readonly number[];
  /** How long a stop waits for hook calls in flight: a hook that answers at once, as it should, is never cut off. */
  shutdownGraceMs: number;
}

export const TURN_DEFAULTS: TurnServiceSettings = { hookRetryDelaysMs: HOOK_RETRY_DELAYS_MS, shutdownGraceMs: 5_000 };

/**
 * A turn from the visitor to the customer's answer: a turn is taken within the deployment's
 * limits, its hook is called (retried, signed), and the answer moves it (see turnLifecycle).
 */
export class TurnService {
  /** Turns on their way into the store (each may start a hook call). */
  readonly #taking = new Set<Promise<unknown>>();
  /** Hook calls and the writes of their answers. */
  readonly #inFlight = new Set<Promise<unknown>>();
  /**
   * Aborted when a shutdown has waited long enough: hook calls still in flight are cut off (their
   * turns fail, so the visitor may ask again) and writes waiting for the store give up.
   */
  readonly #stopping = new AbortController();

  constructor(
    private readonly parts: TurnServiceParts,
    private readonly settings: TurnServiceSettings,
  ) {
    // Every hook call in flight listens to it: hundreds at once are normal, not a leak.
    setMaxListeners(0, this.#stopping.signal);
  }

  /** Takes a visitor's turn; an inactive deployment takes none (`deployment_inactive`, which ends the socket). */
  async submit(known: DeploymentContext, conversationId: string, input: TurnInput): Promise<TurnSubmission> {
    // In flight from the start: a stop waits for a turn still on its way into the store, and then
    // for the hook call it starts, instead of leaving it pending for the next start's sweep.
    const taking = this.#take(known, conversationId, input);
    this.#taking.add(taking);
    try {
      return await taking;
    } finally {
      this.#taking.delete(taking);
    }
  }

  async #take(known: DeploymentContext, conversationId: string, input: TurnInput): Promise<TurnSubmission> {
    const { deployments, conversations, events } = this.parts;
    const dep = (await deployments.get(known.id)) ?? known;
    if (dep.status !== 'active') throw new AppError('deployment_inactive', 'deployment inactive');
    const at = { dep, conversationId };
    // Refusals are returned from the unit, not thrown: a throw would roll back its whole batch.
    const { submission, started } = await events.write(
      conversationId,
      async (unit): Promise<{ submission: TurnSubmission; started?: [ConversationRow, TurnRow] }> => {
        const conversation = await lockConversation(unit.trx, conversationId);
        if (!conversation) return { submission: { outcome: 'gone' } };
        if (conversation.status !== 'open') return refused('conversation_ended', 'The conversation has ended');
        const existing = await findTurnByClientId(unit.trx, conversationId, input.client_turn_id);
        if (existing) return { submission: { outcome: 'duplicate', turnId: existing.id } };
        if (conversation.turn_count >= dep.maxTurnsPerConversation) {
          await conversations.endWithin(unit, at, 'max_turns');
          return { submission: { outcome: 'ended' } };
        }
        const load = await turnLoad(unit.trx, conversationId, isoIn(-60_000));
        if (load.waiting >= dep.maxPendingTurns)
          return refused('too_many_pending_turns', `At most ${dep.maxPendingTurns} turns may wait for a reply`);
        if (load.recent >= dep.turnsPerMinute)
          return refused('rate_limited', `At most ${dep.turnsPerMinute} turns a minute`);
        const turn = await turnLifecycle.take(unit, at, conversation, input, this.parts.nodeId);
        return { submission: { outcome: 'accepted', turnId: turn.id }, started: [conversation, turn] };
      },
    );
    // A turn a person handles was taken acknowledged: no hook call.
    if (started && started[1].status === 'pending') this.#track(this.#runHook(dep, ...started));
    return submission;
  }

  /**
   * Takes over the hook calls of nodes gone silent (README, Running several nodes): a node killed
   * between a hook call's start and its answer left its turns pending. Each is claimed from the
   * silent node (so of several live nodes one calls it) and called again with its own
   * `delivery_id`, so the customer's deduplication holds. Returns how many were taken over.
   */
  async takeOverSilentNodes(limit = 50): Promise<number> {
    const { db, nodeId, deployments, logger } = this.parts;
    if (this.#stopping.signal.aborted) return 0;
    let taken = 0;
    for (const turn of await orphanedPendingTurns(db, nodeId, isoIn(-SILENT_AFTER_MS), limit)) {
      if (!(await takeOverHookCall(db, turn.id, turn.hook_node!, nodeId))) continue;
      const conversation = await findConversation(db, turn.conversation_id);
      const dep = conversation && (await deployments.get(conversation.deployment_id));
      if (!conversation || !dep) continue;
      logger.info(
        { turn_id: turn.id, deployment_id: dep.id, silent_node: turn.hook_node },
        'calling the hook of a turn whose node went silent',
      );
      this.#track(this.#runHook(dep, conversation, { ...turn, hook_node: nodeId }));
      taken++;
    }
    return taken;
  }

  /**
   * The visitor's rating of a reply (README, Knowing how it goes). A rating the deployment does
   * not take, or of a turn this conversation has not had answered, is refused (`invalid_message`).
   */
  async rate(dep: DeploymentContext, conversationId: string, turnId: string, feedback: Feedback): Promise<void> {
    if (dep.widget.feedback === false) throw new AppError('invalid_message', 'Feedback is off for this deployment');
    const rated = await this.parts.events.write(conversationId, (unit) =>
      turnLifecycle.rate(unit, { dep, conversationId }, turnId, feedback),
    );
    if (rated === 'not_found') throw new AppError('invalid_message', 'No such turn in this conversation');
    if (rated === 'not_answered') throw new AppError('invalid_message', 'Only a turn with its reply can be rated');
  }

  /** What the visitor heard of a turn's spoken reply, as the widget reported it; a turn not of this conversation changes nothing. */
  async heard(dep: DeploymentContext, conversationId: string, turnId: string, heard: Heard): Promise<void> {
    await this.parts.events.write(conversationId, (unit) =>
      turnLifecycle.heard(unit, { dep, conversationId }, turnId, heard),
    );
  }

  /**
   * Graceful shutdown: waits the grace period for turns being taken, hook calls in flight and the
   * writes of their answers, then cuts off the rest. A hook call cut off fails its turn (`hook_failed`); a write
   * the store never took leaves its turn `pending`, for the stale-pending sweep of the next start.
   */
  async drain(): Promise<void> {
    const cut = setTimeout(() => this.#stopping.abort(), this.settings.shutdownGraceMs);
    const cutOff = new Promise<void>((resolve) =>
      this.#stopping.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    // Turns being taken are waited for until the cut only: a store that is down would hold them for good.
    while (this.#taking.size && !this.#stopping.signal.aborted)
      await Promise.race([Promise.allSettled([...this.#taking]), cutOff]);
    while (this.#inFlight.size) await Promise.allSettled([...this.#inFlight]);
    clearTimeout(cut);
  }

  #track(work: Promise<unknown>): void {
    // A hook answer the store never took (a stop during an outage) is an outage, logged once like the rest.
    const tracked = work
      .catch((err) => void this.parts.health.failed(err, 'turn processing'))
      .finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  async #runHook(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow): Promise<void> {
    const { events, egress, logger, health, address } = this.parts;
    const signal = this.#stopping.signal;
    const replyUrl = `${address.url}/embed/concierge/${dep.id}/replies`;
    // What the visitor heard of the reply before, read once: every attempt carries the same body. A
    // store that cannot say does not hold the turn back; the hook is called without it.
    const previous = dep.hookUrl
      ? await heardBefore(this.parts.db, turn).catch((err) => void health.failed(err, 'reading what was heard'))
      : undefined;
    const { outcome, exchanges }: HookCall = dep.hookUrl
      ? await callTurnHook(
          () => postTurn(dep, conversation, turn, replyUrl, previous, egress, signal),
          this.settings.hookRetryDelaysMs,
          signal,
        )
      : { outcome: { kind: 'failed', cause: 'no hook_url' }, exchanges: [] };
    if (outcome.kind === 'failed')
      logger.warn({ turn_id: turn.id, deployment_id: dep.id, cause: outcome.cause }, 'turn hook failed');
    const attempts = exchanges.map((ex, i) => {
      const row = deliveryRow(
        {
          kind: 'turn_hook',
          customerId: dep.customerId,
          deploymentId: dep.id,
          conversationId: turn.conversation_id,
          turnId: turn.id,
          eventId: null,
          eventType: 'turn.created',
          attempt: i + 1,
        },
        ex,
      );
      // The last attempt's 2xx could not be read (a reply with invalid actions): its record says why.
      return outcome.kind === 'rejected' && outcome.why && i === exchanges.length - 1
        ? unreadableAnswer(row, outcome.why)
        : row;
    });
    // The customer has answered: its answer, and the record of each attempt, are stored in one
    // change, kept through a store outage, not left to the sweep.
    const store = () =>
      events.write(turn.conversation_id, async (unit) => {
        const at = { dep, conversationId: turn.conversation_id };
        const moved = await turnLifecycle.answer(unit, at, turn.id, outcome, isoIn(dep.replyTimeoutS * 1000));
        if (attempts.length) unit.count(at, { at: turn.created_at, hookMs: attempts.map((a) => a.duration_ms) });
        // A turn ended meanwhile still shows its calls; an erased one keeps nothing.
        if (moved || (await turnExists(unit.trx, turn.id))) await insertDeliveries(unit.trx, attempts);
      });
    await health.persist("storing the hook's answer", store, signal);
  }
}

/** One attempt of a turn's hook call. */
function postTurn(
  dep: DeploymentContext,
  conversation: ConversationRow,
  turn: TurnRow,
  replyUrl: string,
  previous: Awaited<ReturnType<typeof heardBefore>>,
  egress: EgressPolicy,
  signal: AbortSignal,
) {
  const user = {
    sub: conversation.user_sub,
    name: conversation.user_name,
    ctx: conversation.user_ctx ? JSON.parse(conversation.user_ctx) : null,
  };
  const call = {
    delivery_id: turn.delivery_id,
    deployment_id: dep.id,
    agent_id: dep.agentId,
    conversation_id: conversation.id,
    turn_id: turn.id,
    user,
    text: turn.text,
    mode: turn.mode,
    language: turn.language ?? dep.agent.language,
    reply_url: replyUrl,
    ...(previous
      ? {
          previous_reply: {
            turn_id: previous.id,
            heard_text: previous.heard_text!,
            interrupted: previous.heard_interrupted === 1,
          },
        }
      : {}),
  };
  return sendTurnCreated(dep, dep.hookUrl!, call, egress, { signal });
}

const refused = (code: 'conversation_ended' | 'too_many_pending_turns' | 'rate_limited', message: string) => ({
  submission: { outcome: 'refused', error: new AppError(code, message) } as TurnSubmission,
});
