import type { ValidateFunction } from 'ajv';
import {
  type ClientTool,
  compileParameters,
  type ModelResponder as ModelSpec,
  type ServerTool,
} from '../../agents/agent-responder.js';
import type { ReplyAction } from '#protocol/frames';
import { newId } from '../../shared/random.js';
import type { Answering } from '../turns/answering.js';
import type { DeliveryTable } from '../deliveries/delivery.table.js';
import { sendToolCall } from '../deliveries/hook.client.js';
import type { EgressPolicy, Exchange } from '../../shared/egress.js';
import { isoNow } from '../../shared/time.js';
import type { ChatTool, ToolCall } from './chat-completions.js';
import { inBody, inUrl, type VariableValues } from '../conversations/conversation-variables.js';

/** A tool's answer is given to the model up to this many bytes. */
const RESULT_BYTES = 16 * 1024;
/** A model's arguments for one call, at most, as JSON. */
const ARGUMENT_BYTES = 16 * 1024;

/** What a tool call came to: what the model is told, and what it asks of the turn. */
export interface ToolOutcome {
  /** The tool message's content: JSON text. */
  result: string;
  /** The call's delivery record (a tool the customer's server runs). */
  record?: DeliveryTable;
  /** A client action for the reply (a tool the visitor's page runs). */
  action?: ReplyAction;
  /** The built-ins: hand the conversation to a person for this reason, or end it after the reply. */
  handoff?: string;
  end?: boolean;
  /** A call that needs the visitor's word, proposed (kept for a later turn) or made (forgotten). */
  confirmation?: { proposed: ToolConfirmation } | { made: true };
}

/** A proposed call of a tool that needs the visitor's word, kept on its conversation (`tool_confirmation`). */
export interface ToolConfirmation {
  tool: string;
  /** The arguments as canonical JSON (keys sorted): the same call, however the model orders them. */
  args: string;
  turn_id: string;
}

/** JSON with every object's keys sorted: one text for one value. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );

function proposedOf(stored: string | null): ToolConfirmation | undefined {
  if (!stored) return undefined;
  try {
    return JSON.parse(stored) as ToolConfirmation;
  } catch {
    return undefined;
  }
}

const BUILT_INS: ChatTool[] = [
  {
    type: 'function',
    function: {
      name: 'hand_off_to_person',
      description:
        'Hand the conversation to a person from the team, when the visitor asks for one or you cannot help. Tell the visitor a person will answer here.',
      parameters: {
        type: 'object',
        properties: { reason: { type: 'string', description: 'Why, in a few words, for the team' } },
        required: ['reason'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'end_conversation',
      description: 'End the conversation once the visitor says goodbye or has nothing more to ask. Say goodbye first.',
      parameters: { type: 'object', properties: {} },
    },
  },
];

// Each schema (a tool's parameters, an analysis's answer) is compiled once, on its own
// (compileParameters: Ajv's generated code is safe from a schema's contents; the patterns that could
// be slow are refused on publish), and kept by its text while the process lives, the least used
// going first past MAX_COMPILED.
const compiled = new Map<string, ValidateFunction | Error>();
const MAX_COMPILED = 1_000;

/** The schema's validator, compiled once; the Error when it cannot be compiled. */
export function validatorOf(parameters: Record<string, unknown>): ValidateFunction | Error {
  const key = JSON.stringify(parameters);
  let validate = compiled.get(key);
  if (validate) compiled.delete(key);
  else {
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    try {
      validate = compileParameters(parameters);
    } catch (err) {
      validate = err as Error;
    }
  }
  compiled.set(key, validate);
  return validate;
}

const told = (value: unknown): string => JSON.stringify(value);

/**
 * A tool a test mocks (README, Tests and analysis): the call is recorded as it would have been sent,
 * and answered as the test wrote, without reaching the customer's server.
 */
const mockedCall =
  (answer: unknown) =>
  async (_dep: unknown, url: string, call: object): Promise<Exchange> => {
    const body = JSON.stringify(answer ?? null);
    return {
      url,
      sentAt: isoNow(),
      durationMs: 0,
      request: {
        headers: { 'content-type': 'application/json', 'x-concierge-test': 'mocked' },
        body: JSON.stringify(call),
      },
      response: { status: 200, headers: { 'content-type': 'application/json' }, body, bytes: Buffer.byteLength(body) },
    };
  };

/**
 * The tools of a model agent (README, An agent without a server): the customer's (a signed POST to
 * their url), the page's (a `client` action on the reply) and the built-ins. A call whose arguments
 * do not match the tool's JSON Schema goes back to the model as an error, never to anyone's server.
 */
export class AgentTools {
  readonly #server: Map<string, ServerTool>;
  readonly #client: Map<string, ClientTool>;
  /** The call the model proposed in an earlier turn, awaiting the visitor's word. */
  readonly #proposed: ToolConfirmation | undefined;

  constructor(
    private readonly parts: { egress: EgressPolicy },
    private readonly answering: Pick<Answering, 'dep' | 'conversation' | 'turn' | 'record'>,
    spec: ModelSpec,
    /** The conversation's variables, for the tools' URLs and bodies (README, Variables and guardrails). */
    private readonly values: VariableValues,
  ) {
    this.#server = new Map(spec.tools.map((t) => [t.name, t]));
    this.#client = new Map(spec.client_tools.map((t) => [t.name, t]));
    this.#proposed = proposedOf(answering.conversation.tool_confirmation);
  }

  /** The tools as the model is offered them. */
  offered(): ChatTool[] {
    const own = [...this.#server.values(), ...this.#client.values()].map(
      ({ name, description, parameters }): ChatTool => ({
        type: 'function',
        function: { name, description, parameters },
      }),
    );
    return [...own, ...BUILT_INS];
  }

  /** The filler sentence of the tool, if it names one. */
  fillerOf(name: string): string | undefined {
    return this.#server.get(name)?.filler;
  }

  async run(call: ToolCall, attempt: number, signal: AbortSignal): Promise<ToolOutcome> {
    const name = call.function.name;
    if (Buffer.byteLength(call.function.arguments) > ARGUMENT_BYTES)
      return { result: told({ error: `the arguments are over ${ARGUMENT_BYTES} bytes` }) };
    let args: unknown;
    try {
      args = call.function.arguments.trim() ? JSON.parse(call.function.arguments) : {};
    } catch {
      return { result: told({ error: 'the arguments are not JSON: call the tool again with a JSON object' }) };
    }
    if (name === 'hand_off_to_person') {
      const reason =
        typeof (args as { reason?: unknown })?.reason === 'string' ? (args as { reason: string }).reason : '';
      return {
        result: told({ ok: true, note: 'A person from the team will answer here.' }),
        handoff: reason.slice(0, 200) || 'the agent asked for a person',
      };
    }
    if (name === 'end_conversation') return { result: told({ ok: true }), end: true };
    const server = this.#server.get(name);
    const tool = server ?? this.#client.get(name);
    if (!tool) return { result: told({ error: `there is no tool named ${name}` }) };
    const validate = validatorOf(tool.parameters);
    if (validate instanceof Error)
      return { result: told({ error: `the tool's parameters cannot be checked: ${validate.message}` }) };
    if (!validate(args))
      return {
        result: told({
          error: `the arguments do not match the tool's parameters: ${(validate.errors ?? []).map((e) => `data${e.instancePath} ${e.message}`).join(', ')}`,
        }),
      };
    const checked = args as Record<string, unknown>;
    if (!server)
      return {
        result: told({ ok: true, note: "The visitor's page does it as you reply." }),
        action: { type: 'client', name: tool.name, args: checked },
      };
    if (server.confirm) {
      // Sent only when the model makes the very call it proposed in an earlier turn: the visitor has
      // since answered it. The model cannot confirm for them within one turn.
      const args = canonical(checked);
      const proposed = this.#proposed;
      if (!proposed || proposed.tool !== name || proposed.args !== args || proposed.turn_id === this.answering.turn.id)
        return {
          result: told({
            status: 'needs_confirmation',
            note: 'Nothing was done yet. Tell the visitor exactly what you will do, and ask them to confirm. When they agree in their next message, call the tool again with the same arguments.',
          }),
          confirmation: { proposed: { tool: name, args, turn_id: this.answering.turn.id } },
        };
      return { ...(await this.#post(server, checked, attempt, signal)), confirmation: { made: true } };
    }
    return this.#post(server, checked, attempt, signal);
  }

  /** The customer's tool: POSTed once, signed; its JSON answer is the result, anything else a failure the model is told. */
  async #post(
    tool: ServerTool,
    args: Record<string, unknown>,
    attempt: number,
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    const { dep, turn, conversation } = this.answering;
    const callId = newId();
    const mocked = dep.test && Object.hasOwn(dep.test.mocks, tool.name);
    const send = mocked ? mockedCall(dep.test!.mocks[tool.name]) : sendToolCall;
    const ex = await send(
      dep,
      inUrl(this.values)(tool.url),
      {
        ...(tool.body ? (inBody(tool.body, this.values) as Record<string, unknown>) : {}),
        call_id: callId,
        deployment_id: dep.id,
        conversation_id: turn.conversation_id,
        turn_id: turn.id,
        user: {
          sub: conversation.user_sub,
          name: conversation.user_name,
          ctx: conversation.user_ctx ? JSON.parse(conversation.user_ctx) : null,
        },
        tool: tool.name,
        arguments: args,
      },
      tool.timeout_ms,
      this.parts.egress,
      signal,
    );
    const record = this.answering.record('tool', 'tool.call', attempt, ex);
    const res = ex.response;
    if (!res)
      return { record, result: told({ error: `the tool gave no answer: ${ex.error?.message ?? 'no answer'}` }) };
    if (res.status < 200 || res.status > 299)
      return { record, result: told({ error: `the tool failed (HTTP ${res.status})` }) };
    if (res.bytes > RESULT_BYTES)
      return { record, result: told({ error: `the tool's answer is over ${RESULT_BYTES} bytes` }) };
    try {
      return { record, result: told(JSON.parse(res.body)) };
    } catch {
      return {
        record: { ...record, outcome: 'failed', error: 'invalid_answer', error_detail: 'the answer is not JSON' },
        result: told({ error: "the tool's answer is not JSON" }),
      };
    }
  }
}
