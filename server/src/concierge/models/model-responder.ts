import type { Logger } from 'pino';
import { MAX_TOOL_ROUNDS, type ModelResponder as ModelSpec } from '../../agents/agent-responder.js';
import type { Db } from '../../database.js';
import type { ModelTarget } from '../../model-endpoints/model-endpoint.service.js';
import { isoIn } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import { completeSentencesEnd, openSentenceEnd } from '#protocol/sentences';
import { REPLY_PART_LIMITS, type ReplyAction } from '#protocol/frames';
import { type ConversationRow, setToolConfirmation } from '../conversations/conversation.repository.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import {
  heardOfTurns,
  markAnswering,
  setTurnKnowledge,
  turnExists,
  type TurnRow,
} from '../conversations/turn.repository.js';
import type { Passage } from '../../knowledge/knowledge.service.js';
import type { DeploymentContext } from '../deployment-context.js';
import { deliveryRow, unreadableAnswer } from '../deliveries/delivery.record.js';
import { insertDeliveries } from '../deliveries/delivery.repository.js';
import type { DeliveryTable } from '../deliveries/delivery.table.js';
import { type EgressPolicy, egressFor } from '../../shared/egress.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { recentTalk } from '../events/event.repository.js';
import type { Responder, TurnContext } from '../turns/responder.js';
import { type ChatExchange, type ChatMessage, type ChatTarget, STREAM_BOUNDS, streamChat } from './chat-completions.js';
import { citationsOf, ShownText } from '../knowledge/citations.js';
import { serviceWords } from '../service-words.js';
import { AgentTools, type ToolOutcome } from './tool-calls.js';
import type { PerKeyCap } from '../../shared/per-key-cap.js';
import { conversationMessages, dataMessage, systemMessage } from './model-prompt.js';

/** A model call's whole exchange, its stream included, at most. */
export const MODEL_CALL_TIMEOUT_MS = 60_000;
/** Stored events read back to tell the model the conversation (the budget then keeps the newest). */
const TALK_READ = 200;
/** A reply the model writes is kept to the deferred reply's length: its stream is cut there. */
const REPLY_CHARS = STREAM_BOUNDS.textChars;
/** Tool calls one turn runs at most, over all its rounds: a call past it is answered with an error. */
export const MAX_TOOL_CALLS_PER_TURN = 10;
/** Actions a reply carries at most. */
const MAX_ACTIONS = 6;
/** A tool that has not answered by then has the filler sentence said meanwhile. */
export const FILLER_AFTER_MS = 1_500;

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
  /** Model calls in flight per customer on this node (MODEL_CONCURRENCY). */
  calls: PerKeyCap;
  /** Ends a conversation when the model calls `end_conversation`. */
  conversations: Pick<ConversationService, 'endWithin'>;
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

  async answer(
    dep: DeploymentContext,
    conversation: ConversationRow,
    turn: TurnRow,
    context: TurnContext,
    signal: AbortSignal,
  ) {
    const { passages } = context;
    const { events, health } = this.parts;
    const spec = dep.responder as ModelSpec;
    const at = { dep, conversationId: turn.conversation_id };
    // A turn taken over from a node that went silent while its model wrote was acknowledged there.
    const resumed = turn.status === 'acknowledged';
    const acknowledged =
      resumed ||
      (await health.persist(
        'acknowledging a turn for the model',
        () =>
          events.write(turn.conversation_id, async (unit) => {
            const moved = await turnLifecycle.answer(
              unit,
              at,
              turn.id,
              { kind: 'acknowledged' },
              isoIn(dep.replyTimeoutS * 1000),
            );
            if (moved) await markAnswering(unit.trx, turn.id);
            return moved;
          }),
        signal,
      ));
    // Ended, erased or answered meanwhile: nothing to ask.
    if (!acknowledged) return;
    const said = await this.#converse(dep, conversation, turn, spec, context, signal, resumed);
    if (said.why)
      this.parts.logger.warn(
        { turn_id: turn.id, deployment_id: dep.id, cause: said.why, answered: Boolean(said.text) },
        'the agent model failed',
      );
    const records = [...said.calls.map((call, i) => modelCallRow(dep, turn, call, i + 1)), ...said.toolRecords];
    const store = () =>
      events.write(turn.conversation_id, async (unit) => {
        const moved = said.text
          ? (await turnLifecycle.resolve(
              unit,
              at,
              { turnId: turn.id, conversationId: turn.conversation_id, deploymentId: dep.id },
              {
                text: [...said.text].slice(0, REPLY_CHARS).join(''),
                actions: [...said.actions, ...citationsOf(said.written, passages ?? [])].slice(0, MAX_ACTIONS),
              },
            )) === 'stored'
          : Boolean(await turnLifecycle.modelFailed(unit, at, turn.id));
        if (moved && passages) await setTurnKnowledge(unit.trx, turn.id, passages);
        // What the built-in tools asked for follows the reply that says so.
        if (moved && said.text && said.handoff) await turnLifecycle.handOff(unit, at, said.handoff);
        if (moved && said.text && said.end) await this.parts.conversations.endWithin(unit, at, 'agent_ended');
        if (moved && said.confirmation)
          await setToolConfirmation(
            unit.trx,
            turn.conversation_id,
            'proposed' in said.confirmation ? JSON.stringify(said.confirmation.proposed) : null,
          );
        // A turn ended meanwhile still shows its calls; an erased one keeps nothing.
        if (records.length && (moved || (await turnExists(unit.trx, turn.id))))
          await insertDeliveries(unit.trx, records);
      });
    await health.persist("storing the model's answer", store, signal);
  }

  /**
   * The model's answer, tool rounds and all: each round's words go on as parts; tool calls are run
   * and their results given back, within bounds the model cannot talk its way past: at most
   * {@link MAX_TOOL_ROUNDS} rounds (after the last the model is offered no tools, and a call it
   * makes anyway is not run: the turn ends with what was said), at most five calls a round (see
   * STREAM_BOUNDS) and {@link MAX_TOOL_CALLS_PER_TURN} a turn, only the tools offered, and no
   * longer than the turn's reply timeout.
   */
  async #converse(
    dep: DeploymentContext,
    conversation: ConversationRow,
    turn: TurnRow,
    spec: ModelSpec,
    context: TurnContext,
    shutdown: AbortSignal,
    resumed: boolean,
  ) {
    const said = {
      text: '',
      why: undefined as string | undefined,
      calls: [] as ChatExchange[],
      toolRecords: [] as DeliveryTable[],
      actions: [] as ReplyAction[],
      handoff: undefined as string | undefined,
      end: false,
      confirmation: undefined as ToolOutcome['confirmation'],
    };
    const target = await this.#target(dep, spec);
    if (typeof target === 'string') return { ...said, why: target, written: '' };
    const signal = AbortSignal.any([shutdown, AbortSignal.timeout(dep.replyTimeoutS * 1000)]);
    const release = await this.parts.calls.wait(dep.customerId, spec.first_token_timeout_ms, signal);
    if (!release)
      return {
        ...said,
        written: '',
        why: `${this.parts.calls.limit} model calls of this customer already in flight on this node (MODEL_CONCURRENCY)`,
      };
    // Taken over, the parts the silent node stored stand; the reply replaces them whole.
    const writer = new PartWriter(this.parts, dep, turn, { quiet: resumed });
    const tools = new AgentTools(this.parts, dep, conversation, turn, spec);
    try {
      const messages: ChatMessage[] = await this.#messages(dep, conversation, turn, context);
      let model = spec.model;
      let fallback = spec.fallback_model;
      let toolAttempt = 0;
      for (let round = 0; !signal.aborted && writer.written.length < REPLY_CHARS;) {
        // Past the last tool round the model is offered none: it must answer.
        const offered = round < MAX_TOOL_ROUNDS;
        const call = await streamChat(
          { ...target, firstTokenTimeoutMs: spec.first_token_timeout_ms, timeoutMs: MODEL_CALL_TIMEOUT_MS },
          {
            model,
            messages,
            max_tokens: spec.max_output_tokens,
            ...(spec.temperature !== undefined ? { temperature: spec.temperature } : {}),
            ...(offered ? { tools: tools.offered() } : {}),
          },
          egressFor(this.parts.egress, 'models', dep.customerId),
          {
            onText: (piece) => writer.write(piece),
            signal,
            bounds: { ...STREAM_BOUNDS, textChars: REPLY_CHARS - writer.written.length },
          },
        );
        said.calls.push(call);
        said.why = call.failure?.message;
        if (call.failure && !call.text && !call.toolCalls.length) {
          if (!fallback) break;
          // One try on the fallback model, for the rest of the turn.
          model = fallback;
          fallback = undefined;
          continue;
        }
        // A stream cut midway keeps its words; only a whole answer's tool calls are run.
        if (!call.toolCalls.length || call.failure) break;
        if (!offered) {
          said.why = `the model called tools after its last tool round (${MAX_TOOL_ROUNDS}): they were not run`;
          break;
        }
        round++;
        writer.pause();
        const toolCalls = call.toolCalls.map((c, i) => ({ ...c, id: c.id || `call_${round}_${i}` }));
        messages.push({ role: 'assistant', content: call.text || null, tool_calls: toolCalls });
        const filler = setTimeout(
          () =>
            writer.say(
              toolCalls.map((c) => tools.fillerOf(c.function.name)).find(Boolean) ??
                serviceWords(turn.language ?? dep.agent.language).oneMoment,
            ),
          FILLER_AFTER_MS,
        );
        const outcomes = await Promise.all(
          toolCalls.map((c) =>
            ++toolAttempt > MAX_TOOL_CALLS_PER_TURN
              ? {
                  result: JSON.stringify({ error: `at most ${MAX_TOOL_CALLS_PER_TURN} tool calls a turn: answer now` }),
                }
              : tools.run(c, toolAttempt, signal),
          ),
        );
        clearTimeout(filler);
        outcomes.forEach((outcome: ToolOutcome, i) => {
          messages.push({ role: 'tool', tool_call_id: toolCalls[i]!.id, content: outcome.result });
          if (outcome.record) said.toolRecords.push(outcome.record);
          if (outcome.action) said.actions.push(outcome.action);
          said.handoff ??= outcome.handoff;
          said.end ||= Boolean(outcome.end);
          said.confirmation = outcome.confirmation ?? said.confirmation;
        });
      }
      if (signal.aborted && !shutdown.aborted) said.why ??= `the turn's reply timeout (${dep.replyTimeoutS} s) passed`;
      await writer.settled();
    } finally {
      release();
    }
    return { ...said, text: writer.text.trim(), written: writer.written };
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

  async #messages(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow, context: TurnContext) {
    const talk = await recentTalk(this.parts.db, turn.conversation_id, TALK_READ);
    const replied = talk
      .filter((t) => t.type === 'reply')
      .map((t) => (JSON.parse(t.frame) as { turn_id: string }).turn_id);
    const heard = new Map((await heardOfTurns(this.parts.db, replied)).map((row) => [row.id, row]));
    const said = conversationMessages(talk, heard);
    const data = dataMessage(context);
    // The data of this turn comes right before the visitor's message it goes with.
    return [
      { role: 'system' as const, content: systemMessage(dep, conversation, turn, new Date(), context) },
      ...said.slice(0, -1),
      ...(data ? [data] : []),
      ...said.slice(-1),
    ];
  }
}

/**
 * Hands the model's words on as reply parts, each ending a sentence (at most a part's length),
 * stored one after the other; a part the store did not take is left out, and the final reply
 * carries the whole text anyway.
 */
class PartWriter {
  /** What the model wrote, its citation markers included. */
  #raw = '';
  readonly #shown = new ShownText();
  #sent = 0;
  /** Where the sentence marks still open at the end begin: the next look for a sentence's end starts there. */
  #open = 0;
  #paused = false;
  #next = 0;
  /** Complete sentences waiting for the part being written to be stored. */
  #unsent = '';
  #writing: Promise<void> | undefined;

  constructor(
    private readonly parts: Pick<ModelResponderParts, 'events' | 'health'>,
    private readonly dep: DeploymentContext,
    private readonly turn: TurnRow,
    /** Stores no parts: only the final reply says what was written. */
    private readonly settings: { quiet: boolean },
  ) {}

  /** Everything written so far, fillers included, without citation markers: the final reply. */
  get text(): string {
    return this.#shown.text;
  }

  /** The same with its markers: what the citations are read from. */
  get written(): string {
    return this.#raw;
  }

  /** A piece of the model's words: each sentence it completes goes on as a part (only the new tail is read). */
  write(piece: string): void {
    // A round's words after a tool call continue the reply: apart from the words before them.
    if (this.#paused && piece.trim()) {
      this.#paused = false;
      if (this.#raw && !/\s$/.test(this.#raw) && !/^\s/.test(piece)) this.#append(' ');
    }
    this.#append(piece);
    const text = this.#shown.text;
    const end = completeSentencesEnd(text, Math.max(this.#sent, this.#open));
    this.#open = openSentenceEnd(text);
    if (end <= this.#sent) return;
    const ready = text.slice(this.#sent, end);
    this.#sent = end;
    this.#store(ready);
  }

  /** The model called a tool: what it wrote so far is complete, and goes on as a part now. */
  pause(): void {
    this.#paused = true;
    const text = this.#shown.text;
    if (text.length <= this.#sent) return;
    const rest = text.slice(this.#sent);
    this.#sent = this.#open = text.length;
    this.#store(rest);
  }

  /** A sentence of the service's own while a tool works (the filler): said as a part, and kept in the reply. */
  say(sentence: string): void {
    this.pause();
    this.#append(`${this.#raw && !/\s$/.test(this.#raw) ? ' ' : ''}${sentence} `);
    const text = this.#shown.text;
    const said = text.slice(this.#sent);
    this.#sent = this.#open = text.length;
    this.#store(said);
  }

  /**
   * Markers go as a whole: one still open at the end (`[1`) stays out of any complete sentence, and
   * once closed it is gone from the text, before or after what was sent alike.
   */
  #append(piece: string): void {
    this.#raw += piece;
    this.#shown.push(piece);
  }

  /** Resolves once every part handed on so far is stored (or given up on). */
  settled(): Promise<unknown> {
    return this.#writing ?? Promise.resolve();
  }

  /**
   * Sentences are stored one part at a time: while a part is being written, what completes meanwhile
   * waits and goes as the next part, so a model that writes faster than the store takes its parts
   * costs a few writes, not one per sentence. A part the store did not take is left out; the final
   * reply carries the whole text anyway.
   */
  #store(text: string): void {
    if (this.settings.quiet) return;
    this.#unsent += text;
    this.#writing ??= this.#drain();
  }

  async #drain(): Promise<void> {
    const { dep, turn } = this;
    const scope = { turnId: turn.id, conversationId: turn.conversation_id, deploymentId: dep.id };
    try {
      while (this.#unsent.trim()) {
        const [first = '', ...rest] = pieces(this.#unsent);
        this.#unsent = rest.join('');
        const part = this.#next++;
        if (part >= REPLY_PART_LIMITS.parts) {
          this.#unsent = '';
          return;
        }
        await this.parts.events
          .write(turn.conversation_id, (unit) =>
            turnLifecycle.part(
              unit,
              { dep, conversationId: turn.conversation_id },
              scope,
              { part, text: first },
              isoIn(dep.replyTimeoutS * 1000),
            ),
          )
          .catch((err) => void this.parts.health.failed(err, "storing a part of the model's reply"));
      }
    } finally {
      this.#writing = undefined;
    }
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
