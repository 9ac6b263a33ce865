import type { KnowledgeResponder as KnowledgeSpec } from '../../agents/agent-responder.js';
import type { Answer } from '../conversations/answer.js';
import { serviceWords } from '../service-words.js';
import type { Answering } from '../turns/answering.js';
import type { Responder } from '../turns/responder.js';
import { answerFrom } from './knowledge-answer.js';

/**
 * The agent's knowledge base answers (README, Answers from your documents), with no model and no
 * server: the best passage's most relevant sentences and a link to their source when it answers the
 * question; else "I don't know" in the conversation's language, with a quick reply that asks for a
 * person, which hands the conversation over when the visitor sends it.
 */
export class KnowledgeResponder implements Responder<KnowledgeSpec> {
  async answer(answering: Answering, spec: KnowledgeSpec): Promise<void> {
    const { dep, turn, context } = answering;
    const words = serviceWords(turn.language ?? dep.agent.language);
    const found = answerFrom(turn.text, context.passages ?? [], spec.min_match, context.leansOn);
    const answer: Answer =
      turn.text.trim() === words.ask
        ? { kind: 'replied', text: words.handedOver, actions: [], handoff: 'The visitor asked for a person' }
        : found
          ? { kind: 'replied', text: found.text, actions: found.citation ? [found.citation] : [] }
          : {
              kind: 'replied',
              text: words.unknown,
              actions: [{ type: 'quick_reply', label: words.askLabel, text: words.ask }],
            };
    await answering.settle(answer, []);
  }
}
