import type { Passage } from '../../knowledge/knowledge-retrieval.js';
import type { Exchange } from '../../shared/egress.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { Answer } from '../conversations/answer.js';
import type { TurnRow } from '../conversations/turn.repository.js';
import type { DeliveryKind, DeliveryTable } from '../deliveries/delivery.table.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import type { TurnPage } from '../pages/page.service.js';
import type { GuardrailDecision } from '#protocol/guardrails';

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
 * What an answer may ask of the conversation besides the reply: that it ends (the model's
 * `end_conversation`), and the tool call waiting for the visitor's word (set, or `null` when made).
 */
export type Settlement = Answer & {
  end?: boolean;
  toolConfirmation?: string | null;
  /** What the agent's guardrails decided about the reply's sentences (README, Variables and guardrails). */
  guardrails?: GuardrailDecision[];
};

/**
 * A turn as the turn core hands it to whoever answers it (README, An agent without a server): what
 * it is and where, and how to answer. Each move is the core's to record: the turn's state, the
 * knowledge it was answered from, the record of every call made for it, through a store outage.
 */
export interface Answering {
  readonly dep: DeploymentContext;
  readonly conversation: ConversationRow;
  readonly turn: TurnRow;
  readonly context: TurnContext;
  /** A shutdown cutting the answer off. */
  readonly signal: AbortSignal;
  /** The reply will come later, from this node: false when the turn moved on meanwhile (ended, erased, answered). */
  acknowledge(): Promise<boolean>;
  /** A part of the reply as it is written: stored and told; one the store does not take is left out (the reply carries all). */
  part(part: number, text: string): Promise<void>;
  /** The answer, and the record of every call made for it, in one change. */
  settle(answer: Settlement, records: readonly DeliveryTable[]): Promise<void>;
  /** The record of one call made for this turn: its hook, its model, a tool. */
  record(kind: DeliveryKind, eventType: string, attempt: number, exchange: Exchange): DeliveryTable;
}
