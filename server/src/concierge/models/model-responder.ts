import type { Logger } from 'pino';
import { MAX_TOOL_ROUNDS, type ModelResponder as ModelSpec } from '../../agents/agent-responder.js';
import type { Db } from '../../database.js';
import type { ModelTarget } from '../../model-endpoints/model-endpoint.service.js';
import type { ReplyAction } from '#protocol/frames';
import { heardOfTurns } from '../conversations/turn-voice.repository.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import type { DeliveryTable } from '../deliveries/delivery.table.js';
import { type EgressPolicy, egressFor } from '../../shared/egress.js';
import { recentTalk } from '../events/event.repository.js';
import type { Answering, Settlement } from '../turns/answering.js';
import type { Responder } from '../turns/responder.js';
import { type ChatExchange, type ChatMessage, type ChatTarget, STREAM_BOUNDS, streamChat } from './chat-completions.js';
import { citationsOf } from '../knowledge/citations.js';
import { serviceWords } from '../service-words.js';
import { AgentTools, type ToolOutcome } from './tool-calls.js';
import type { PerKeyCap } from '../../shared/per-key-cap.js';
import { conversationMessages, dataMessage, systemMessage } from './model-prompt.js';
import { modelCallRecord } from './model-call-record.js';
import { PartWriter } from './part-writer.js';
import { randomBytes } from 'node:crypto';
import type { GuardrailDecision } from '#protocol/guardrails';
import { conversationValues, type VariableValues } from '../conversations/conversation-variables.js';
import type { EvaluationModels } from './evaluation-model.js';
import { ReplyGuard, retryMessages, sentenceJudge } from './guardrails.js';

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
  /** The conversation so far is read from it. */
  db: Db;
  egress: EgressPolicy;
  logger: Logger;
  /** The customer's model endpoints, their keys opened. */
  endpoints: { target(customerId: string, id: string): Promise<ModelTarget | undefined> };
  /** MODEL_URL and MODEL_KEY: for agents that name no endpoint. */
  operator: { url: string; key: string | undefined } | undefined;
  /** Model calls in flight per customer on this node (MODEL_CONCURRENCY). */
  calls: PerKeyCap;
  /** The model that judges sentences by the topic rule and custom criteria (README, Variables and guardrails). */
  judges: Pick<EvaluationModels, 'of'>;
}

/**
 * The agent's own model answers (README, An agent without a server): the turn is acknowledged at
 * once, the model's words are handed on as reply parts at each sentence's end (so the first is
 * spoken while it writes the rest), and its whole text resolves the turn. No first token in time,
 * or an error, tries the fallback model once; nothing at all fails the turn (`model_failed`).
 * Every call is a delivery record of kind `model`.
 */
export class ModelResponder implements Responder<ModelSpec> {
  constructor(private readonly parts: ModelResponderParts) {}

  async answer(answering: Answering, spec: ModelSpec) {
    const { dep, turn, context } = answering;
    // A turn taken over from a node that went silent while its model wrote was acknowledged there.
    const resumed = turn.status === 'acknowledged';
    // Ended, erased or answered meanwhile: nothing to ask.
    if (!(await answering.acknowledge())) return;
    const said = await this.#converse(answering, spec, resumed);
    if (said.why)
      this.parts.logger.warn(
        { turn_id: turn.id, deployment_id: dep.id, cause: said.why, answered: Boolean(said.text) },
        'the agent model failed',
      );
    const records = [...said.calls.map((call, i) => modelCallRecord(answering, call, i + 1)), ...said.toolRecords];
    // What the built-in tools asked for follows the reply that says so.
    const answer: Settlement = said.text
      ? {
          kind: 'replied',
          text: [...said.text].slice(0, REPLY_CHARS).join(''),
          actions: [...said.actions, ...citationsOf(said.written, context.passages ?? [])].slice(0, MAX_ACTIONS),
          handoff: said.handoff,
          end: said.end,
        }
      : { kind: 'failed', reason: 'model_failed' };
    if (said.guardrails.length) answer.guardrails = said.guardrails;
    if (said.confirmation)
      answer.toolConfirmation = 'proposed' in said.confirmation ? JSON.stringify(said.confirmation.proposed) : null;
    await answering.settle(answer, records);
  }

  /**
   * The model's answer, tool rounds and all: each round's words go on as parts; tool calls are run
   * and their results given back, within bounds the model cannot talk its way past: at most
   * {@link MAX_TOOL_ROUNDS} rounds (after the last the model is offered no tools, and a call it
   * makes anyway is not run: the turn ends with what was said), at most five calls a round (see
   * STREAM_BOUNDS) and {@link MAX_TOOL_CALLS_PER_TURN} a turn, only the tools offered, and no
   * longer than the turn's reply timeout.
   */
  async #converse(answering: Answering, spec: ModelSpec, resumed: boolean) {
    const { dep, turn, signal: shutdown } = answering;
    const said = {
      text: '',
      why: undefined as string | undefined,
      calls: [] as ChatExchange[],
      toolRecords: [] as DeliveryTable[],
      actions: [] as ReplyAction[],
      handoff: undefined as string | undefined,
      end: false,
      confirmation: undefined as ToolOutcome['confirmation'],
      guardrails: [] as GuardrailDecision[],
    };
    const target = await this.#target(dep, spec);
    if (typeof target === 'string') return { ...said, why: target, written: '' };
    const values = conversationValues({
      conversation: answering.conversation,
      language: turn.language ?? dep.agent.language,
      page: answering.context.page,
      now: new Date(),
    });
    const rules = dep.spec.guardrails;
    const canary = rules.injection ? randomBytes(6).toString('hex') : undefined;
    const guard = new ReplyGuard(rules, {
      canary,
      asked: turn.text,
      judge: rules.topics || rules.custom?.length ? await sentenceJudge(this.parts, dep) : 'no rule to judge',
    });
    const signal = AbortSignal.any([shutdown, AbortSignal.timeout(dep.limits.replyTimeoutS * 1000)]);
    const release = await this.parts.calls.wait(dep.customerId, spec.first_token_timeout_ms, signal);
    if (!release)
      return {
        ...said,
        written: '',
        why: `${this.parts.calls.limit} model calls of this customer already in flight on this node (MODEL_CONCURRENCY)`,
      };
    // Each model call can be cut by a guardrail stopping one of its sentences.
    let halt = new AbortController();
    // Taken over, the parts the silent node stored stand; the reply replaces them whole.
    const writer = new PartWriter(
      answering,
      { quiet: resumed },
      guard.checks
        ? { check: (sentence, before) => guard.check(sentence, before), onStop: () => halt.abort() }
        : undefined,
    );
    const tools = new AgentTools(this.parts, answering, spec, values);
    let retried = false;
    try {
      const messages: ChatMessage[] = await this.#messages(answering, values, canary);
      let model = spec.model;
      let fallback = spec.fallback_model;
      let toolAttempt = 0;
      for (let round = 0; !signal.aborted && writer.written.length < REPLY_CHARS;) {
        // Past the last tool round the model is offered none: it must answer.
        const offered = round < MAX_TOOL_ROUNDS;
        halt = new AbortController();
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
            signal: AbortSignal.any([signal, halt.signal]),
            bounds: { ...STREAM_BOUNDS, textChars: REPLY_CHARS - writer.written.length },
          },
        );
        said.calls.push(call);
        said.why = call.failure?.message;
        // Every sentence judged before a tool runs or the reply is settled: a stopped one ends this call's say.
        if (guard.checks) await (call.toolCalls.length && !call.failure ? writer.checked() : writer.finish());
        const stop = writer.stopped;
        if (stop) {
          said.why = undefined;
          // `retry`: the model is asked once more, told what was stopped; a second stop refuses.
          if (stop.decision.action !== 'retry' || retried) break;
          retried = true;
          messages.push(...retryMessages(writer.text, stop));
          writer.resume();
          continue;
        }
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
      if (signal.aborted && !shutdown.aborted)
        said.why ??= `the turn's reply timeout (${dep.limits.replyTimeoutS} s) passed`;
      await writer.finish();
      const stop = writer.stopped;
      if (stop) {
        // Retried once and stopped again: refused.
        if (stop.decision.action === 'retry' && retried) writer.decisions.at(-1)!.action = 'refuse';
        const words = serviceWords(turn.language ?? dep.agent.language);
        if (stop.decision.action === 'hand_off')
          said.handoff ??= `a guardrail: ${stop.decision.detail ?? stop.decision.rule}`;
        writer.resume();
        writer.say(stop.decision.action === 'hand_off' ? words.handedOver : (rules.refuse_text ?? words.refusal));
        await writer.finish();
      }
      said.guardrails = writer.decisions;
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

  async #messages({ dep, conversation, turn, context }: Answering, values: VariableValues, canary: string | undefined) {
    const talk = await recentTalk(this.parts.db, turn.conversation_id, TALK_READ);
    const replied = talk
      .filter((t) => t.type === 'reply')
      .map((t) => (JSON.parse(t.frame) as { turn_id: string }).turn_id);
    const heard = new Map((await heardOfTurns(this.parts.db, replied)).map((row) => [row.id, row]));
    const said = conversationMessages(talk, heard);
    // The turn being answered as said: what is stored of it may be redacted (README, Privacy: what is kept).
    const current = said.at(-1);
    if (current?.role === 'user') said[said.length - 1] = { ...current, content: turn.text };
    const data = dataMessage(context);
    // The data of this turn comes right before the visitor's message it goes with.
    return [
      {
        role: 'system' as const,
        content: systemMessage(dep, conversation, turn, new Date(), context, { values, canary }),
      },
      ...said.slice(0, -1),
      ...(data ? [data] : []),
      ...said.slice(-1),
    ];
  }
}
