import type { Logger } from 'pino';
import type { ModelResponder as ModelSpec } from '../../agents/agent-responder.js';
import type { Db } from '../../database.js';
import type { ModelTarget } from '../../model-endpoints/model-endpoint.service.js';
import { isoIn } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import { completeSentencesEnd } from '#protocol/sentences';
import { REPLY_PART_LIMITS } from '#protocol/frames';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import { heardOfTurns, turnExists, type TurnRow } from '../conversations/turn.repository.js';
import type { DeploymentContext } from '../deployment-context.js';
import { deliveryRow, unreadableAnswer } from '../deliveries/delivery.record.js';
import { insertDeliveries } from '../deliveries/delivery.repository.js';
import type { DeliveryTable } from '../deliveries/delivery.table.js';
import type { EgressPolicy } from '../egress.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { recentTalk } from '../events/event.repository.js';
import type { Responder } from '../turns/responder.js';
import { type ChatExchange, type ChatTarget, streamChat } from './chat-completions.js';
import type { ModelCalls } from './model-calls.js';
import { conversationMessages, systemMessage } from './model-prompt.js';

/** A model call's whole exchange, its stream included, at most. */
export const MODEL_CALL_TIMEOUT_MS = 60_000;
/** Stored events read back to tell the model the conversation (the budget then keeps the newest). */
const TALK_READ = 200;
/** A reply the model writes is kept to the deferred reply's length. */
const REPLY_CHARS = 10_000;

export interface ModelResponderParts {
  db: Db;
  events: EventRecorder;
  egress: EgressPolicy;
  logger: Logger;
  health: StoreHealth;
  /** The customer's model endpoints, their keys opened. */
  endpoints: { target(customerId: string, id: string): Promise<ModelTarget | undefined> };
  /** MODEL_URL and MODEL_KEY: for agents that name no endpoint. */
  operator: { url: string; key: string | undefined } | undefined;
  calls: ModelCalls;
}

/**
 * The agent's own model answers (README, An agent without a server): the turn is acknowledged at
 * once, the model's words are handed on as reply parts at each sentence's end (so the first is
 * spoken while it writes the rest), and its whole text resolves the turn. No first token in time,
 * or an error, tries the fallback model once; nothing at all fails the turn (`model_failed`).
 * Every call is a delivery record of kind `model`.
 */
export class ModelResponder implements Responder {
  constructor(private readonly parts: ModelResponderParts) {}

  async answer(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow, signal: AbortSignal) {
    const { events, health, calls } = this.parts;
    const spec = dep.responder as ModelSpec;
    const at = { dep, conversationId: turn.conversation_id };
    const acknowledged = await health.persist(
      'acknowledging a turn for the model',
      () =>
        events.write(turn.conversation_id, (unit) =>
          turnLifecycle.answer(unit, at, turn.id, { kind: 'acknowledged' }, isoIn(dep.replyTimeoutS * 1000)),
        ),
      signal,
    );
    // Ended, erased or answered meanwhile: nothing to ask.
    if (!acknowledged) return;
    const calls_: ChatExchange[] = [];
    let text = '';
    let why: string | undefined;
    const target = await this.#target(dep, spec);
    if (typeof target === 'string') why = target;
    else {
      const release = await calls.take(dep.customerId, spec.first_token_timeout_ms, signal);
      if (!release)
        why = `${calls.limit} model calls of this customer already in flight on this node (MODEL_CONCURRENCY)`;
      else
        try {
          const messages = await this.#messages(dep, conversation, turn);
          const parts = new PartWriter(this.parts, dep, turn);
          for (const model of [spec.model, ...(spec.fallback_model ? [spec.fallback_model] : [])]) {
            const call = await streamChat(
              { ...target, firstTokenTimeoutMs: spec.first_token_timeout_ms, timeoutMs: MODEL_CALL_TIMEOUT_MS },
              {
                model,
                messages,
                max_tokens: spec.max_output_tokens,
                ...(spec.temperature !== undefined ? { temperature: spec.temperature } : {}),
              },
              this.parts.egress,
              (piece) => parts.write(piece),
              signal,
            );
            calls_.push(call);
            text = call.text.trim();
            why = call.failure?.message;
            // A model that said something keeps its words (a stream cut midway resolves with them).
            if (text || signal.aborted) break;
          }
          await parts.settled();
        } finally {
          release();
        }
    }
    if (why)
      this.parts.logger.warn(
        { turn_id: turn.id, deployment_id: dep.id, cause: why, answered: Boolean(text) },
        'the agent model failed',
      );
    const records = calls_.map((call, i) => modelCallRow(dep, turn, call, i + 1));
    const store = () =>
      events.write(turn.conversation_id, async (unit) => {
        const moved = text
          ? await turnLifecycle.resolve(
              unit,
              at,
              { turnId: turn.id, conversationId: turn.conversation_id, deploymentId: dep.id },
              { text: [...text].slice(0, REPLY_CHARS).join(''), actions: [] },
            )
          : await turnLifecycle.modelFailed(unit, at, turn.id);
        if (records.length && (moved || (await turnExists(unit.trx, turn.id))))
          await insertDeliveries(unit.trx, records);
      });
    await health.persist("storing the model's answer", store, signal);
  }

  /** Where the agent's model is: its endpoint, or the operator's; else why there is none. */
  async #target(
    dep: DeploymentContext,
    spec: ModelSpec,
  ): Promise<Omit<ChatTarget, 'firstTokenTimeoutMs' | 'timeoutMs'> | string> {
    if (spec.endpoint_id) {
      const found = await this.parts.endpoints.target(dep.customerId, spec.endpoint_id).catch((err: Error) => err);
      if (found instanceof Error)
        return `the model endpoint's key cannot be opened here (${found.message}): is SECRETS_KEY the one it was stored with?`;
      return found ?? `the model endpoint ${spec.endpoint_id} no longer exists`;
    }
    const { operator } = this.parts;
    return operator
      ? { baseUrl: operator.url, key: operator.key }
      : 'the agent names no model endpoint and the service has no MODEL_URL';
  }

  async #messages(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow) {
    const talk = await recentTalk(this.parts.db, turn.conversation_id, TALK_READ);
    const replied = talk
      .filter((t) => t.type === 'reply')
      .map((t) => (JSON.parse(t.frame) as { turn_id: string }).turn_id);
    const heard = new Map((await heardOfTurns(this.parts.db, replied)).map((row) => [row.id, row]));
    return [
      { role: 'system' as const, content: systemMessage(dep, conversation, turn, new Date()) },
      ...conversationMessages(talk, heard),
    ];
  }
}

/**
 * Hands the model's words on as reply parts, each ending a sentence (at most a part's length),
 * stored one after the other; a part the store did not take is left out, and the final reply
 * carries the whole text anyway.
 */
class PartWriter {
  #text = '';
  #sent = 0;
  #next = 0;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly parts: Pick<ModelResponderParts, 'events' | 'health'>,
    private readonly dep: DeploymentContext,
    private readonly turn: TurnRow,
  ) {}

  write(piece: string): void {
    this.#text += piece;
    const end = completeSentencesEnd(this.#text);
    if (end <= this.#sent) return;
    const ready = this.#text.slice(this.#sent, end);
    this.#sent = end;
    for (const text of pieces(ready)) this.#store(text);
  }

  settled(): Promise<unknown> {
    return this.#chain;
  }

  #store(text: string): void {
    const { dep, turn } = this;
    const part = this.#next++;
    if (part >= REPLY_PART_LIMITS.parts) return;
    const scope = { turnId: turn.id, conversationId: turn.conversation_id, deploymentId: dep.id };
    this.#chain = this.#chain.then(() =>
      this.parts.events
        .write(turn.conversation_id, (unit) =>
          turnLifecycle.part(
            unit,
            { dep, conversationId: turn.conversation_id },
            scope,
            { part, text },
            isoIn(dep.replyTimeoutS * 1000),
          ),
        )
        .catch((err) => void this.parts.health.failed(err, "storing a part of the model's reply")),
    );
  }
}

/** `text` cut into parts of at most a part's length in code points, whitespace kept where it was. */
function pieces(text: string): string[] {
  const points = [...text];
  const out: string[] = [];
  for (let i = 0; i < points.length; i += REPLY_PART_LIMITS.partChars)
    out.push(points.slice(i, i + REPLY_PART_LIMITS.partChars).join(''));
  return out.filter((piece) => piece.trim());
}

/** A model call's delivery record: the request without the key, the answer (or the words written), and its figures. */
function modelCallRow(dep: DeploymentContext, turn: TurnRow, call: ChatExchange, attempt: number): DeliveryTable {
  const { failure } = call;
  const kept = call.errorBody ?? call.text;
  const row = deliveryRow(
    {
      kind: 'model',
      customerId: dep.customerId,
      deploymentId: dep.id,
      conversationId: turn.conversation_id,
      turnId: turn.id,
      eventId: null,
      eventType: 'model.call',
      attempt,
    },
    {
      url: call.url,
      sentAt: call.sentAt,
      durationMs: call.durationMs,
      request: call.request,
      ...(call.status === undefined
        ? {}
        : {
            response: {
              status: call.status,
              headers: call.responseHeaders,
              body: kept,
              bytes: Buffer.byteLength(kept),
            },
          }),
      ...(failure && failure.kind !== 'status' && failure.kind !== 'malformed' && failure.kind !== 'not_a_stream'
        ? {
            error: {
              kind: failure.kind === 'first_token_timeout' ? 'timeout' : failure.kind,
              message: failure.message,
            },
          }
        : {}),
    },
  );
  const figures = {
    first_token_ms: call.firstTokenMs ?? null,
    tokens_in: call.usage?.prompt_tokens ?? null,
    tokens_out: call.usage?.completion_tokens ?? null,
  };
  if (failure?.kind === 'malformed' || failure?.kind === 'not_a_stream')
    return { ...unreadableAnswer(row, failure.message), ...figures };
  return { ...row, ...figures, ...(failure?.kind === 'status' ? { error_detail: failure.message } : {}) };
}
