import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { TurnRow } from '../conversations/turn.repository.js';
import type { DeploymentContext } from '../deployment-context.js';
import type { Passage } from '../../knowledge/knowledge.service.js';
import type { TurnPage } from '../pages/page.service.js';

/** What the turn core found for a turn before it is answered. */
export interface TurnContext {
  /** The agent's knowledge base's best passages for the visitor's words; undefined when the agent has no base. */
  passages: Passage[] | undefined;
  /** Where the visitor is: the turn's page, the page's context and events (README, Greeting visitors first). */
  page: TurnPage;
  /** For a follow-up ("how much is it?"): the questions it leans on, newest first; empty for a question that stands alone. */
  leansOn: string[];
}

/**
 * What answers a pending turn (README, An agent without a server): the customer's hook, or the
 * agent's model. Either moves the turn through the same lifecycle (acknowledged, parts, resolved
 * or failed) and stores the record of every call it made; the turn core does not know which runs.
 */
export interface Responder {
  /** Resolves once the turn's answer (or failure) is stored; `signal` is a shutdown cutting it off. */
  answer(
    dep: DeploymentContext,
    conversation: ConversationRow,
    turn: TurnRow,
    context: TurnContext,
    signal: AbortSignal,
  ): Promise<void>;
}

/** The responder for a deployment's turns, from its agent's published spec. */
export type ResponderFor = (dep: DeploymentContext) => Responder;
