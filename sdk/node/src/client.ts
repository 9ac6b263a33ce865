import { randomUUID } from 'node:crypto';
import { ConciergeRequestError } from './errors.js';
import type { HookAnswer } from './events.js';
import { signBody } from './signatures.js';

/** A link, quick reply or client action on a reply (README, Actions on a reply). */
export type ReplyAction = NonNullable<HookAnswer['actions']>[number];

/** The turn a reply answers: the turn hook's body, or at least these fields of it. */
export interface TurnRef {
  conversation_id: string;
  turn_id: string;
  reply_url: string;
}

/** What the service said to a reply, a part or a person's answer. */
export interface ReplyResult {
  turn_id: string;
  status: 'resolved' | 'acknowledged';
  part?: number;
  /** The service had it already (a retry whose first answer was lost): nothing happened twice. */
  duplicate: boolean;
}

export interface RetryOptions {
  /** Attempts in all, the first included (default 8). */
  attempts?: number;
  /** The first wait, doubled after each failure up to `maxDelayMs` (default 250 ms). */
  baseDelayMs?: number;
  /** The longest wait between attempts (default 5,000 ms). */
  maxDelayMs?: number;
}

export interface ClientOptions {
  /** The deployment's signing secret: signs replies and their parts. */
  secret?: string;
  /** Your API key (`vak_...`): for the management calls (takeover, release, a person's answer, a message). */
  apiKey?: string;
  /** Where the service is, for the management calls (replies go to each turn's `reply_url`). */
  baseUrl?: string;
  retry?: RetryOptions;
  /** Called before each retry with what failed (to log it): `attempt` is the one about to be made. */
  onRetry?: (failure: ConciergeRequestError, attempt: number) => void;
  /** The `fetch` to use (default the global one). */
  fetch?: typeof fetch;
}

/** The most code points a part may hold (README, Streaming a reply): a longer chunk becomes several parts. */
const MAX_PART = 2000;
/** A 409 that only says "not yet": the service waits 2 s for the hook's acknowledgement before answering it. */
const NOT_YET = 'turn_not_acknowledged';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A chunk as parts the service takes: at most {@link MAX_PART} code points each. */
function* partsOf(chunk: string): Generator<string> {
  // At most 2,000 UTF-16 units is at most 2,000 code points: most chunks need no splitting.
  if (chunk.length <= MAX_PART) {
    if (chunk !== '') yield chunk;
    return;
  }
  const points = [...chunk];
  for (let i = 0; i < points.length; i += MAX_PART) yield points.slice(i, i + MAX_PART).join('');
}

interface Envelope {
  data?: unknown;
  error?: { code?: string; message?: string };
}

/**
 * Talks to Concierge for your server: signed replies to turns (whole, or streamed in parts as they
 * are written), and the management calls a person's tools make. Every call is retried with backoff
 * on a 5xx, a 429 and a network error, which is safe: a reply or part the service already has
 * answers `200 duplicate`, and management calls carry one `Idempotency-Key` across their retries.
 * A `409` other than "not acknowledged yet" is final and throws {@link ConciergeRequestError}.
 */
export class ConciergeClient {
  private readonly fetch: typeof fetch;
  private readonly retry: Required<RetryOptions>;

  constructor(private readonly options: ClientOptions) {
    this.fetch = options.fetch ?? globalThis.fetch;
    this.retry = { attempts: 8, baseDelayMs: 250, maxDelayMs: 5000, ...options.retry };
  }

  /** The final reply to a turn: resolves it with `text` (1 to 10,000 characters) and `actions`. */
  reply(turn: TurnRef, text: string, options: { actions?: ReplyAction[] } = {}): Promise<ReplyResult> {
    return this.postReply(turn, { reply_text: text, ...(options.actions ? { actions: options.actions } : {}) });
  }

  /**
   * Streams a reply as it is written: each chunk of `chunks` is posted as the next part (in order,
   * each acknowledged before the next), then the whole text as the final reply. Stops at the first
   * final refusal (the turn ended, expired or was answered elsewhere), closing `chunks`, and throws.
   */
  async stream(
    turn: TurnRef,
    chunks: AsyncIterable<string> | Iterable<string>,
    options: { actions?: ReplyAction[] } = {},
  ): Promise<ReplyResult> {
    let text = '';
    let part = 0;
    for await (const chunk of chunks) {
      if (typeof chunk !== 'string') throw new TypeError('stream: each chunk must be a string');
      for (const piece of partsOf(chunk)) {
        await this.postReply(turn, { part: part++, text: piece });
        text += piece;
      }
    }
    if (text === '') throw new TypeError('stream: the reply is empty');
    return this.reply(turn, text, options);
  }

  /** A person takes the conversation over, under the name visitors see (1 to 60 characters). */
  takeover(conversationId: string, name: string): Promise<unknown> {
    return this.manage(`/api/v1/conversations/${encodeURIComponent(conversationId)}/takeover`, { name });
  }

  /** Back to the agent: turns go to your hook again. */
  release(conversationId: string): Promise<unknown> {
    return this.manage(`/api/v1/conversations/${encodeURIComponent(conversationId)}/release`, {});
  }

  /** A person's answer to a waiting turn of a conversation they took over. */
  async personReply(
    conversationId: string,
    turnId: string,
    text: string,
    options: { actions?: ReplyAction[] } = {},
  ): Promise<ReplyResult> {
    const path = `/api/v1/conversations/${encodeURIComponent(conversationId)}/turns/${encodeURIComponent(turnId)}/reply`;
    return (await this.manage(path, {
      reply_text: text,
      ...(options.actions ? { actions: options.actions } : {}),
    })) as ReplyResult;
  }

  /** A person writes to the visitor without a turn to answer. */
  message(conversationId: string, message: { text: string; name: string; actions?: ReplyAction[] }): Promise<unknown> {
    return this.manage(`/api/v1/conversations/${encodeURIComponent(conversationId)}/messages`, message);
  }

  private postReply(turn: TurnRef, fields: Record<string, unknown>): Promise<ReplyResult> {
    const secret = this.options.secret;
    if (!secret) throw new TypeError("ConciergeClient: a reply needs `secret`, the deployment's signing secret");
    const body = JSON.stringify({ conversation_id: turn.conversation_id, turn_id: turn.turn_id, ...fields });
    const headers = { 'content-type': 'application/json', 'x-service-signature': signBody(secret, body) };
    return this.send(turn.reply_url, body, headers) as Promise<ReplyResult>;
  }

  private manage(path: string, body: unknown): Promise<unknown> {
    const { apiKey, baseUrl } = this.options;
    if (!apiKey || !baseUrl) throw new TypeError('ConciergeClient: management calls need `apiKey` and `baseUrl`');
    const headers = {
      'content-type': 'application/json',
      authorization: `Bearer ${apiKey}`,
      'idempotency-key': randomUUID(),
    };
    return this.send(`${baseUrl.replace(/\/+$/, '')}${path}`, JSON.stringify(body), headers);
  }

  /** One POST, retried as the class says; the envelope's `data` on success. */
  private async send(url: string, body: string, headers: Record<string, string>): Promise<unknown> {
    let failure: ConciergeRequestError | undefined;
    for (let attempt = 1; attempt <= this.retry.attempts; attempt++) {
      if (attempt > 1) {
        this.options.onRetry?.(failure!, attempt);
        await sleep(this.delay(attempt - 1, failure));
      }
      let response: Response;
      try {
        response = await this.fetch(url, { method: 'POST', headers, body });
      } catch (err) {
        failure = new ConciergeRequestError(
          null,
          'network',
          `POST ${url}: ${err instanceof Error ? err.message : String(err)}`,
        );
        continue;
      }
      const envelope = (await response.json().catch(() => ({}))) as Envelope;
      if (response.ok) return envelope.data;
      const code = envelope.error?.code ?? `http_${response.status}`;
      failure = new ConciergeRequestError(
        response.status,
        code,
        envelope.error?.message ?? `POST ${url} answered ${response.status}`,
        Number(response.headers.get('retry-after')) || undefined,
      );
      const transient =
        response.status >= 500 || response.status === 429 || response.status === 408 || code === NOT_YET;
      if (!transient) throw failure;
    }
    throw failure!;
  }

  private delay(retry: number, failure: ConciergeRequestError | undefined): number {
    const after = failure?.retryAfterSeconds;
    if (after) return Math.min(after * 1000, this.retry.maxDelayMs);
    const ceiling = Math.min(this.retry.baseDelayMs * 2 ** (retry - 1), this.retry.maxDelayMs);
    // Full jitter keeps a crowd of servers from retrying in step after an outage.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}
