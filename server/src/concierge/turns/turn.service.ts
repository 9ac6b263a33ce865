import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import { newId } from '../../shared/random.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import { type ConversationRow, lockConversation } from '../conversations/conversation.repository.js';
import type { DeploymentContext, DeploymentDirectory } from '../deployment-context.js';
import type { EgressPolicy } from '../egress.js';
import { type EventRecorder, turnChanges } from '../events/event.recorder.js';
import type { ClientMessage } from '../protocol/frames.js';
import { deliveryRow } from '../deliveries/delivery.record.js';
import { insertDeliveries } from '../deliveries/delivery.repository.js';
import { callTurnHook, type HookCall, postTurn } from './hook.client.js';
import { findTurnByClientId, insertTurn, transitionTurn, turnExists, turnLoad, type TurnRow } from './turn.repository.js';

/** How long a shutdown waits for hook calls in flight: a hook that answers at once, as it should, is never cut off. */
const SHUTDOWN_GRACE_MS = 5_000;

/** A visitor's turn as the widget sends it. */
export type TurnInput = Omit<Extract<ClientMessage, { type: 'user_turn' }>, 'type'>;

/** A turn taken (or recognised as a resend), refused with the reason the widget is told, the conversation ended by it, or gone (erased). */
export type TurnSubmission = { outcome: 'accepted' | 'duplicate'; turnId: string } | { outcome: 'refused'; error: AppError } | { outcome: 'ended' | 'gone' };

export interface TurnServiceOptions {
  deployments: DeploymentDirectory;
  conversations: ConversationService;
  events: EventRecorder;
  egress: EgressPolicy;
  logger: Logger;
  /** The hook's answer is retried through it while the store is down. */
  health: StoreHealth;
  /** Base of the `reply_url` in hook calls; known once the server listens. */
  publicBaseUrl(): string;
  hookRetryDelaysMs?: readonly number[];
}

/**
 * The turn's state machine up to the customer's answer: a turn is taken within the deployment's
 * limits, its hook is called (retried, signed), and the answer moves it to acknowledged, resolved
 * or failed, each change stored with the events it tells.
 */
export class TurnService {
  private readonly inFlight = new Set<Promise<unknown>>();
  /**
   * Aborted when a shutdown has waited long enough: hook calls still in flight are cut off (their
   * turns fail, so the visitor may ask again) and writes waiting for the store give up.
   */
  private readonly stopping = new AbortController();

  constructor(private readonly o: TurnServiceOptions) {
    // Every hook call in flight listens to it: hundreds at once are normal, not a leak.
    setMaxListeners(0, this.stopping.signal);
  }

  /** Takes a visitor's turn; an inactive deployment takes none (`deployment_inactive`, which ends the socket). */
  async submit(known: DeploymentContext, conversationId: string, input: TurnInput): Promise<TurnSubmission> {
    const dep = (await this.o.deployments.get(known.id)) ?? known;
    if (dep.status !== 'active') throw new AppError('deployment_inactive', 'deployment inactive');
    // Refusals are returned from the unit, not thrown: a throw would roll back its whole batch.
    const { submission, started } = await this.o.events.write(conversationId, async (trx, written): Promise<{ submission: TurnSubmission; started?: [ConversationRow, TurnRow] }> => {
      const conversation = await lockConversation(trx, conversationId);
      if (!conversation) return { submission: { outcome: 'gone' } };
      if (conversation.status !== 'open') return refused('conversation_ended', 'The conversation has ended');
      const existing = await findTurnByClientId(trx, conversationId, input.client_turn_id);
      if (existing) return { submission: { outcome: 'duplicate', turnId: existing.id } };
      if (conversation.turn_count >= dep.maxTurnsPerConversation) {
        await this.o.conversations.endWithin(trx, written, dep, conversationId, 'max_turns');
        return { submission: { outcome: 'ended' } };
      }
      const load = await turnLoad(trx, conversationId, isoIn(-60_000));
      if (load.waiting >= dep.maxPendingTurns) return refused('too_many_pending_turns', `At most ${dep.maxPendingTurns} turns may wait for a reply`);
      if (load.recent >= dep.turnsPerMinute) return refused('rate_limited', `At most ${dep.turnsPerMinute} turns a minute`);
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
        acknowledged_at: null,
        resolved_at: null,
        reply_received_at: null,
        reply_duplicates: 0,
        created_at: now,
        updated_at: now,
      };
      await insertTurn(trx, turn);
      const accepted = { turn_id: turn.id, client_turn_id: turn.client_turn_id, text: turn.text, mode: turn.mode };
      await this.o.events.record(
        trx,
        written,
        dep,
        conversationId,
        { events: [{ type: 'turn_accepted', ...accepted }], transcript: [{ type: 'turn.created', data: accepted }] },
        { turn_count: conversation.turn_count + 1 },
      );
      return { submission: { outcome: 'accepted', turnId: turn.id }, started: [conversation, turn] };
    });
    if (started) this.track(this.runHook(dep, ...started));
    return submission;
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

  private track(work: Promise<unknown>): void {
    // A hook answer the store never took (a stop during an outage) is an outage, logged once like the rest.
    const tracked = work.catch((err) => void this.o.health.failed(err, 'turn processing')).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async runHook(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow): Promise<void> {
    const replyUrl = `${this.o.publicBaseUrl()}/embed/concierge/${dep.id}/replies`;
    const { outcome, exchanges }: HookCall = dep.hookUrl
      ? await callTurnHook(() => postTurn(dep, conversation, turn, replyUrl, this.o.egress, this.stopping.signal), this.o.hookRetryDelaysMs, this.stopping.signal)
      : { outcome: { kind: 'failed', cause: 'no hook_url' }, exchanges: [] };
    if (outcome.kind === 'failed') this.o.logger.warn({ turn_id: turn.id, deployment_id: dep.id, cause: outcome.cause }, 'turn hook failed');
    const attempts = exchanges.map((ex, i) =>
      deliveryRow(
        { kind: 'turn_hook', customerId: dep.customerId, deploymentId: dep.id, conversationId: turn.conversation_id, turnId: turn.id, eventId: null, eventType: 'turn.created', attempt: i + 1 },
        ex,
      ),
    );
    const { events } = this.o;
    // The customer has answered: its answer, and the record of each attempt, are stored in one
    // change, kept through a store outage, not left to the sweep.
    const store = () =>
      events.write(turn.conversation_id, async (trx, written) => {
        const now = isoNow();
        let moved: TurnRow | undefined;
        if (outcome.kind === 'replied') {
          moved = await transitionTurn(trx, turn.id, 'pending', 'resolved', { reply_text: outcome.text, acknowledged_at: now, resolved_at: now });
          if (moved) await events.record(trx, written, dep, turn.conversation_id, turnChanges.resolved(turn.id, outcome.text, true));
        } else if (outcome.kind === 'acknowledged') {
          moved = await transitionTurn(trx, turn.id, 'pending', 'acknowledged', { expires_at: isoIn(dep.replyTimeoutS * 1000), acknowledged_at: now });
          if (moved) await events.record(trx, written, dep, turn.conversation_id, turnChanges.acknowledged(turn.id));
        } else {
          const reason = outcome.kind === 'rejected' ? 'hook_rejected' : 'hook_failed';
          moved = await transitionTurn(trx, turn.id, 'pending', 'failed', { failure_reason: reason });
          if (moved) await events.record(trx, written, dep, turn.conversation_id, turnChanges.failed(turn.id, reason));
        }
        // A turn ended meanwhile still shows its calls; an erased one keeps nothing.
        if (moved || (await turnExists(trx, turn.id))) await insertDeliveries(trx, attempts);
      });
    await this.o.health.persist("storing the hook's answer", store, this.stopping.signal);
  }
}

const refused = (code: 'conversation_ended' | 'too_many_pending_turns' | 'rate_limited', message: string) => ({ submission: { outcome: 'refused', error: new AppError(code, message) } as TurnSubmission });
