import type { KnowledgeResponder as KnowledgeSpec } from '../../agents/agent-responder.js';
import { isoIn } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import { setTurnKnowledge, type TurnRow } from '../conversations/turn.repository.js';
import type { HookOutcome } from '../deliveries/hook.client.js';
import type { DeploymentContext } from '../deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { serviceWords } from '../service-words.js';
import type { Responder, TurnContext } from '../turns/responder.js';
import { answerFrom } from './knowledge-answer.js';

/**
 * The agent's knowledge base answers (README, Answers from your documents), with no model and no
 * server: the best passage's most relevant sentences and a link to their source when it answers the
 * question; else "I don't know" in the conversation's language, with a quick reply that asks for a
 * person, which hands the conversation over when the visitor sends it.
 */
export class KnowledgeResponder implements Responder {
  constructor(private readonly parts: { events: EventRecorder; health: StoreHealth }) {}

  async answer(
    dep: DeploymentContext,
    _conversation: ConversationRow,
    turn: TurnRow,
    { passages, leansOn }: TurnContext,
    signal: AbortSignal,
  ): Promise<void> {
    const spec = dep.responder as KnowledgeSpec;
    const words = serviceWords(turn.language ?? dep.agent.language);
    const found = answerFrom(turn.text, passages ?? [], spec.min_match, leansOn);
    const outcome: HookOutcome =
      turn.text.trim() === words.ask
        ? { kind: 'replied', text: words.handedOver, actions: [], handoff: 'The visitor asked for a person' }
        : found
          ? { kind: 'replied', text: found.text, actions: found.citation ? [found.citation] : [] }
          : {
              kind: 'replied',
              text: words.unknown,
              actions: [{ type: 'quick_reply', label: words.askLabel, text: words.ask }],
            };
    const at = { dep, conversationId: turn.conversation_id };
    await this.parts.health.persist(
      'storing the knowledge base’s answer',
      () =>
        this.parts.events.write(turn.conversation_id, async (unit) => {
          const moved = await turnLifecycle.answer(unit, at, turn.id, outcome, isoIn(dep.replyTimeoutS * 1000));
          if (moved && passages) await setTurnKnowledge(unit.trx, turn.id, passages);
        }),
      signal,
    );
  }
}
