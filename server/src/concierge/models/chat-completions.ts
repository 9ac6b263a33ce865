import { type EgressPolicy, EgressRefused, EgressTimeout, guardedPost } from '../../shared/egress.js';

/** One message of the conversation as OpenAI's chat completions take it. */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string; name?: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A tool the model may call, described by its JSON Schema. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens: number;
  tools?: ChatTool[];
}

/** Where the model is, and how long it may take. */
export interface ChatTarget {
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; never recorded nor logged. */
  key: string | undefined;
  firstTokenTimeoutMs: number;
  /** The whole exchange, stream included. */
  timeoutMs: number;
}

/** Why a call gave no answer to use. */
export type ChatFailure =
  | {
      kind: 'first_token_timeout' | 'timeout' | 'network' | 'egress_refused' | 'malformed' | 'not_a_stream';
      message: string;
    }
  | { kind: 'status'; status: number; message: string };

/** A call as it went: what was sent (no key), what came back, and the figures of its delivery record. */
export interface ChatExchange {
  url: string;
  sentAt: string;
  durationMs: number;
  request: { headers: Record<string, string>; body: string };
  status: number | undefined;
  responseHeaders: Record<string, string | string[] | undefined>;
  /** The words written, in order. */
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | undefined;
  /** The stream ended with `data: [DONE]`. */
  done: boolean;
  firstTokenMs: number | undefined;
  usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
  /** An error answer's body (at most 64 KiB), kept for the record. */
  errorBody: string | undefined;
  failure: ChatFailure | undefined;
}

/** One server-sent event's `data`, as OpenAI streams a completion. */
interface Chunk {
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

class MalformedStream extends Error {}
class FirstTokenTimeout extends Error {}

/**
 * Calls `{baseUrl}/chat/completions` with `stream: true` under the hooks' egress rules and reads
 * its server-sent events as they arrive (OpenAI's documented stream: `data: {chunk}` events, the
 * usage in the last chunk, then `data: [DONE]`). `onText` is given each piece of the reply as it
 * is written. Never rejects: whatever went wrong is in `failure`, with what was said before it.
 */
export async function streamChat(
  target: ChatTarget,
  request: ChatRequest,
  egress: EgressPolicy,
  onText: (text: string) => void,
  signal?: AbortSignal,
): Promise<ChatExchange> {
  const url = `${target.baseUrl}/chat/completions`;
  const body = JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } });
  const recorded = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'concierge-models/1',
    accept: 'text/event-stream',
  };
  const headers = target.key ? { ...recorded, authorization: `Bearer ${target.key}` } : recorded;
  const sentAt = new Date();
  const started = performance.now();
  const result: ChatExchange = {
    url,
    sentAt: sentAt.toISOString(),
    durationMs: 0,
    request: { headers: recorded, body },
    status: undefined,
    responseHeaders: {},
    text: '',
    toolCalls: [],
    finishReason: undefined,
    done: false,
    firstTokenMs: undefined,
    usage: undefined,
    errorBody: undefined,
    failure: undefined,
  };
  // The first token is waited for `firstTokenTimeoutMs` at most: a model that says nothing is cut off.
  const cut = new AbortController();
  const firstToken = setTimeout(() => cut.abort(new FirstTokenTimeout()), target.firstTokenTimeoutMs);
  const signals = signal ? AbortSignal.any([signal, cut.signal]) : cut.signal;
  const events = new EventStream();
  const calls: ToolCall[] = [];
  const firstWord = () => {
    if (result.firstTokenMs !== undefined) return;
    result.firstTokenMs = Math.round(performance.now() - started);
    clearTimeout(firstToken);
  };
  const take = (data: string) => {
    if (data === '[DONE]') {
      result.done = true;
      return;
    }
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      throw new MalformedStream(`the stream sent an event that is not JSON: ${data.slice(0, 200)}`);
    }
    if (chunk.error) throw new MalformedStream(`the model reported an error: ${chunk.error.message ?? 'unknown'}`);
    if (chunk.usage) result.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      const content = choice.delta?.content;
      if (content) {
        firstWord();
        result.text += content;
        onText(content);
      }
      for (const piece of choice.delta?.tool_calls ?? []) {
        firstWord();
        const call = (calls[piece.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.function.name += piece.function.name;
        if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
      }
      if (choice.finish_reason) result.finishReason = choice.finish_reason;
    }
  };
  let broken: MalformedStream | undefined;
  try {
    const response = await guardedPost(url, body, headers, target.timeoutMs, egress, signals, {
      wanted: (status, answer) =>
        status >= 200 && status <= 299 && /^text\/event-stream/i.test(answer['content-type'] ?? ''),
      data: (bytes) => {
        if (broken) return;
        try {
          for (const data of events.push(bytes)) take(data);
        } catch (err) {
          broken = err as MalformedStream;
          cut.abort(broken);
        }
      },
    });
    result.status = response.status;
    result.responseHeaders = response.headers;
    const streamed = response.status >= 200 && response.status <= 299;
    const isStream = /^text\/event-stream/i.test(response.headers['content-type'] ?? '');
    if (!streamed) {
      result.errorBody = response.body;
      result.failure = {
        kind: 'status',
        status: response.status,
        message: `the model endpoint answered ${response.status}${detailOf(response.body)}`,
      };
    } else if (!isStream) {
      result.errorBody = response.body;
      result.failure = {
        kind: 'not_a_stream',
        message: `the model endpoint answered ${response.headers['content-type'] ?? 'without a content type'}, not a stream of events`,
      };
    } else {
      for (const data of events.end()) take(data);
    }
  } catch (err) {
    const why = signals.reason ?? err;
    result.failure =
      why instanceof FirstTokenTimeout
        ? { kind: 'first_token_timeout', message: `no first token within ${target.firstTokenTimeoutMs} ms` }
        : why instanceof MalformedStream
          ? { kind: 'malformed', message: why.message }
          : err instanceof EgressRefused
            ? { kind: 'egress_refused', message: err.message }
            : err instanceof EgressTimeout
              ? { kind: 'timeout', message: err.message }
              : { kind: 'network', message: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(firstToken);
  }
  if (!result.failure && broken) result.failure = { kind: 'malformed', message: broken.message };
  if (!result.failure && !result.done && !result.finishReason)
    result.failure = { kind: 'malformed', message: 'the stream ended before the model finished (no [DONE])' };
  result.toolCalls = calls.filter(Boolean);
  result.durationMs = Math.round(performance.now() - started);
  return result;
}

/**
 * Server-sent events as bytes arrive: events end at a blank line; an event's `data:` lines are
 * joined with newlines; comments (`:`) and other fields are skipped. A line may end in CRLF, CR or LF.
 */
class EventStream {
  #pending = '';
  readonly #decoder = new TextDecoder();

  push(bytes: Buffer): string[] {
    this.#pending += this.#decoder.decode(bytes, { stream: true });
    const blocks = this.#pending.split(/\r\n\r\n|\n\n|\r\r/);
    this.#pending = blocks.pop()!;
    return blocks.flatMap(dataOf);
  }

  end(): string[] {
    const rest = this.#pending + this.#decoder.decode();
    this.#pending = '';
    return dataOf(rest);
  }
}

function dataOf(block: string): string[] {
  const lines = block.split(/\r\n|\n|\r/).filter((line) => line.startsWith('data:'));
  if (!lines.length) return [];
  return [lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n')];
}

/** An error answer's message, when it is OpenAI's `{"error": {"message": ...}}`. */
function detailOf(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' ? `: ${message.slice(0, 300)}` : '';
  } catch {
    return '';
  }
}
