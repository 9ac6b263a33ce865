import type { Exchange } from '../../shared/egress.js';
import { isoIn } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import { type ConversationRow, setToolConfirmation } from '../conversations/conversation.repository.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import { knowledgeColumn, turnExists, type TurnRow } from '../conversations/turn.repository.js';
import { deliveryRow, keptBodies } from '../deliveries/delivery.record.js';
import { insertDeliveries } from '../deliveries/delivery.repository.js';
import type { DeliveryKind, DeliveryTable } from '../deliveries/delivery.table.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';
import type { Answering, Settlement, TurnContext } from './answering.js';

export interface AnsweringParts {
  events: EventRecorder;
  health: StoreHealth;
  conversations: Pick<ConversationService, 'endWithin'>;
}

/** The turn core's side of {@link Answering}: every move a unit of work of the conversation. */
export class TurnAnswering implements Answering {
  /** Where the turn is now: pending until this node acknowledges it (a taken-over turn already was). */
  #from: 'pending' | 'acknowledged';

  constructor(
    private readonly parts: AnsweringParts,
    readonly dep: DeploymentContext,
    readonly conversation: ConversationRow,
    readonly turn: TurnRow,
    readonly context: TurnContext,
    readonly signal: AbortSignal,
  ) {
    this.#from = turn.status === 'acknowledged' ? 'acknowledged' : 'pending';
  }

  get #at() {
    return { dep: this.dep, conversationId: this.turn.conversation_id };
  }

  get #replyDueAt() {
    return isoIn(this.dep.limits.replyTimeoutS * 1000);
  }

  async acknowledge(): Promise<boolean> {
    if (this.#from === 'acknowledged') return true;
    const moved = await this.parts.health.persist(
      'acknowledging a turn',
      () =>
        this.parts.events.write(this.turn.conversation_id, async (unit) => {
          const turn = await turnLifecycle.answer(
            unit,
            this.#at,
            this.turn.id,
            'pending',
            { kind: 'acknowledged' },
            this.#replyDueAt,
            // This node answers it itself (a model's reply): another takes it over if this one goes silent.
            { answering: 1 },
          );
          return Boolean(turn);
        }),
      this.signal,
    );
    if (moved) this.#from = 'acknowledged';
    return moved;
  }

  async part(part: number, text: string): Promise<void> {
    const scope = { turnId: this.turn.id, conversationId: this.turn.conversation_id, deploymentId: this.dep.id };
    await this.parts.events
      .write(this.turn.conversation_id, (unit) =>
        turnLifecycle.part(unit, this.#at, scope, { part, text }, this.#replyDueAt),
      )
      .catch((err) => void this.parts.health.failed(err, 'storing a part of a reply'));
  }

  async settle(answer: Settlement, records: readonly DeliveryTable[]): Promise<void> {
    const { events, health, conversations } = this.parts;
    const { turn, context } = this;
    const at = this.#at;
    const hooked = records.filter((r) => r.kind === 'turn_hook');
    await health.persist(
      'storing the answer to a turn',
      () =>
        events.write(turn.conversation_id, async (unit) => {
          const decisions = answer.guardrails ?? [];
          const keeping = unit.keeping(at, turn.language ?? undefined);
          const kept = {
            ...(context.passages ? { knowledge: knowledgeColumn(context.passages) } : {}),
            // A stopped sentence is words said to nobody, kept as the deployment keeps words.
            ...(decisions.length
              ? {
                  guardrails: JSON.stringify(
                    decisions.map((d) => (d.sentence ? { ...d, sentence: keeping.stored(d.sentence) } : d)),
                  ),
                }
              : {}),
          };
          const moved = await turnLifecycle.answer(unit, at, turn.id, this.#from, answer, this.#replyDueAt, kept);
          if (hooked.length) unit.count(at, { at: turn.created_at, hookMs: hooked.map((r) => r.duration_ms) });
          if (moved && decisions.length)
            unit.count(at, { at: turn.created_at, guardrails: decisions.map((d) => d.action) });
          if (moved && answer.kind === 'replied' && answer.end) await conversations.endWithin(unit, at, 'agent_ended');
          if (moved && answer.toolConfirmation !== undefined)
            await setToolConfirmation(unit.trx, turn.conversation_id, answer.toolConfirmation);
          // A turn ended meanwhile still shows its calls; an erased one keeps nothing.
          if (records.length && (moved || (await turnExists(unit.trx, turn.id)))) {
            await insertDeliveries(
              unit.trx,
              keeping.verbatim ? [...records] : records.map((r) => keptBodies(r, (text) => keeping.body(text))),
            );
          }
        }),
      this.signal,
    );
  }

  record(kind: DeliveryKind, eventType: string, attempt: number, exchange: Exchange): DeliveryTable {
    const { dep, turn } = this;
    return deliveryRow(
      {
        kind,
        customerId: dep.customerId,
        deploymentId: dep.id,
        conversationId: turn.conversation_id,
        turnId: turn.id,
        eventId: null,
        eventType,
        attempt,
      },
      exchange,
    );
  }
}
