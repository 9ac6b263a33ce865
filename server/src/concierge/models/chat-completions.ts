import { type EgressPolicy, EgressRefused, EgressTimeout, guardedPost } from '../../shared/egress.js';
import { EventStream, MalformedStream } from './event-stream.js';

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

/**
 * What a streamed answer may hold (README, An agent without a server): the reply's characters (the
 * stream is cut there, what came kept), tool calls in one answer (calls past them are dropped and
 * counted, however the model numbers them) and each call's arguments (kept one character past
 * the bound, so the call is refused for its size, never run cut short).
 */
export interface StreamBounds {
  textChars: number;
  calls: number;
  argumentChars: number;
}

export const STREAM_BOUNDS: StreamBounds = { textChars: 10_000, calls: 5, argumentChars: 16 * 1024 };

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
  /** The words written, in order (at most `textChars`). */
  text: string;
  toolCalls: ToolCall[];
  /** Tool calls the answer made past `calls`, not kept. */
  droppedCalls: number;
  /** The reply reached `textChars`: the stream was cut there. */
  cut: boolean;
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

class FirstTokenTimeout extends Error {}
class ReplyComplete extends Error {}

/**
 * Calls `{baseUrl}/chat/completions` with `stream: true` under the hooks' egress rules and reads
 * its server-sent events as they arrive (OpenAI's documented stream: `data: {chunk}` events, the
 * usage in the last chunk, then `data: [DONE]`), within `bounds`. `onText` is given each piece of
 * the reply as it is written. Never rejects: whatever went wrong is in `failure`, with what was
 * said before it.
 */
export async function streamChat(
  target: ChatTarget,
  request: ChatRequest,
  egress: EgressPolicy,
  {
    onText = () => {},
    signal,
    bounds = STREAM_BOUNDS,
  }: { onText?: (text: string) => void; signal?: AbortSignal | undefined; bounds?: StreamBounds } = {},
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
    droppedCalls: 0,
    cut: false,
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
  // By the index the model gives each call, only those below `bounds.calls`: an index is the model's to make up.
  const calls = new Map<number, ToolCall>();
  let dropped = 0;
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
      if (typeof content === 'string' && content) {
        firstWord();
        const room = bounds.textChars - result.text.length;
        const kept = content.length > room ? content.slice(0, room) : content;
        result.text += kept;
        if (kept) onText(kept);
        if (content.length >= room) {
          result.cut = true;
          throw new ReplyComplete();
        }
      }
      for (const piece of Array.isArray(choice.delta?.tool_calls) ? choice.delta.tool_calls : []) {
        firstWord();
        const index = piece?.index;
        if (!Number.isInteger(index) || index < 0 || index >= bounds.calls) {
          // A call's first piece names it: each dropped call is counted once.
          if (piece?.function?.name) dropped++;
          continue;
        }
        const call = calls.get(index) ?? { id: '', type: 'function', function: { name: '', arguments: '' } };
        calls.set(index, call);
        if (typeof piece.id === 'string') call.id = piece.id.slice(0, 200);
        call.function.name = within(call.function.name, piece.function?.name, 65);
        call.function.arguments = within(call.function.arguments, piece.function?.arguments, bounds.argumentChars + 1);
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
        if (broken || result.cut) return;
        try {
          for (const data of events.push(bytes)) take(data);
        } catch (err) {
          if (err instanceof ReplyComplete) cut.abort(err);
          else {
            broken = err as MalformedStream;
            cut.abort(broken);
          }
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
    if (why instanceof ReplyComplete) {
      // The stream flowed (a 2xx event stream) until it was cut where the reply was long enough.
      result.status ??= 200;
      result.finishReason = 'length';
    } else
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
  result.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  result.droppedCalls = dropped;
  result.durationMs = Math.round(performance.now() - started);
  return result;
}

/** `text` with `piece` added, kept to `max` characters: what streams in past it is not kept. */
function within(text: string, piece: unknown, max: number): string {
  if (typeof piece !== 'string' || text.length >= max) return text;
  return (text + piece).slice(0, max);
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
