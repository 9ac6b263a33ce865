import type { Logger } from 'pino';
import type { Db } from '../../database.js';
import type { PublicAddress } from '../../http/public-address.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { Answer } from '../conversations/answer.js';
import type { TurnRow } from '../conversations/turn.repository.js';
import { heardBefore } from '../conversations/turn-voice.repository.js';
import type { TurnPage } from '../pages/page.service.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { unreadableAnswer } from '../deliveries/delivery.record.js';
import { callTurnHook, type HookCall, type HookOutcome, sendTurnCreated } from '../deliveries/hook.client.js';
import type { EgressPolicy } from '../../shared/egress.js';
import type { ResponderSpec } from '../../agents/agent-responder.js';
import type { Answering } from './answering.js';
import type { TurnContext } from './answering.js';
import type { Responder } from './responder.js';

type HookSpec = Extract<ResponderSpec, { type: 'hook' }>;

export interface HookResponderParts {
  db: Db;
  egress: EgressPolicy;
  logger: Logger;
  /** A read of what was heard that meets a store outage is logged through it. */
  health: StoreHealth;
  /** Base of the `reply_url` in hook calls. */
  address: PublicAddress;
}

/** How the hook's answer tells the turn core: a refusal, or a call that never got an answer, is a failure. */
const answerOf = (outcome: HookOutcome): Answer =>
  outcome.kind === 'rejected'
    ? { kind: 'failed', reason: 'hook_rejected' }
    : outcome.kind === 'failed'
      ? { kind: 'failed', reason: 'hook_failed' }
      : outcome;

/** The customer's turn hook answers (README, Concierge sessions): called signed, retried, its answer moving the turn. */
export class HookResponder implements Responder<HookSpec> {
  constructor(
    private readonly parts: HookResponderParts,
    /** Waits before the second and third hook attempts. */
    private readonly retryDelaysMs: readonly number[],
  ) {}

  async answer(answering: Answering) {
    const { dep, conversation, turn, context, signal } = answering;
    const { egress, logger, health, address } = this.parts;
    const replyUrl = `${address.url}/embed/concierge/${dep.id}/replies`;
    // What the visitor heard of the reply before, read once: every attempt carries the same body. A
    // store that cannot say does not hold the turn back; the hook is called without it.
    const previous = dep.hook.url
      ? await heardBefore(this.parts.db, turn).catch((err) => void health.failed(err, 'reading what was heard'))
      : undefined;
    const { outcome, exchanges }: HookCall = dep.hook.url
      ? await callTurnHook(
          () => postTurn(dep, conversation, turn, { replyUrl, previous, ...context }, egress, signal),
          this.retryDelaysMs,
          signal,
        )
      : { outcome: { kind: 'failed', cause: 'no hook_url' }, exchanges: [] };
    if (outcome.kind === 'failed')
      logger.warn({ turn_id: turn.id, deployment_id: dep.id, cause: outcome.cause }, 'turn hook failed');
    const attempts = exchanges.map((ex, i) => {
      const row = answering.record('turn_hook', 'turn.created', i + 1, ex);
      // The last attempt's 2xx could not be read (a reply with invalid actions): its record says why.
      return outcome.kind === 'rejected' && outcome.why && i === exchanges.length - 1
        ? unreadableAnswer(row, outcome.why)
        : row;
    });
    // The customer has answered: its answer, and the record of each attempt, are stored in one change.
    await answering.settle(answerOf(outcome), attempts);
  }
}

/** One attempt of a turn's hook call. */
function postTurn(
  dep: DeploymentContext,
  conversation: ConversationRow,
  turn: TurnRow,
  about: { replyUrl: string; previous: Awaited<ReturnType<typeof heardBefore>>; page: TurnPage } & Pick<
    TurnContext,
    'passages'
  >,
  egress: EgressPolicy,
  signal: AbortSignal,
) {
  const { replyUrl, previous, passages, page } = about;
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
    page,
    // A test run's turn (README, Tests and analysis): the customer's server may answer without acting.
    ...(dep.test ? { test: true } : {}),
    ...(previous
      ? {
          previous_reply: {
            turn_id: previous.id,
            heard_text: previous.heard_text!,
            interrupted: previous.heard_interrupted === 1,
          },
        }
      : {}),
    // The agent's knowledge base's passages (README, Answers from your documents): retrieval for the customer's own model.
    ...(passages
      ? {
          knowledge: passages.map(({ chunk_id, document_id, title, url, text, score }) => ({
            chunk_id,
            document_id,
            title,
            url,
            text,
            score,
          })),
        }
      : {}),
  };
  return sendTurnCreated(dep, dep.hook.url!, call, egress, { signal });
}
