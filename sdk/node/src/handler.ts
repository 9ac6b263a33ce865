import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConciergeClient } from './client.js';
import { type DeliveryStore, type HookResponse, MemoryDeliveryStore } from './deliveries.js';
import { HookVerificationError } from './errors.js';
import type { HookAnswer, ToolCall, TranscriptEvent, TurnHook } from './events.js';
import {
  checkSecrets,
  type HeaderSource,
  type HookEvent,
  isToolCall,
  isTurnHook,
  type VerifyOptions,
  verifyHook,
} from './signatures.js';

/**
 * What your `onTurn` gives back:
 * - a string, or `{reply_text, actions?}`: the answer, at once (the hook's `200`);
 * - `{handoff: {reason}, reply_text?}`: hand the conversation to a person;
 * - an async iterable of strings (an `async function*`, a model's stream): the hook answers `202` at
 *   once and the reply is streamed in parts, then sent whole;
 * - nothing: the hook answers `202`; reply later with {@link ConciergeClient.reply}.
 */
export type TurnAnswer = string | HookAnswer | AsyncIterable<string> | undefined | void;

export interface HookHandlerOptions {
  /** The deployment's signing secret; during a rotation's grace, the new one first, then the old. */
  secrets: string | readonly string[];
  onTurn?: (turn: TurnHook, client: ConciergeClient) => TurnAnswer | Promise<TurnAnswer>;
  /**
   * A model agent's tool call (README, An agent without a server): its arguments already match the
   * tool's JSON Schema; what you return (any JSON) is given to the model as the tool's result. Throw
   * to tell the model the tool failed.
   */
  onTool?: (call: ToolCall) => unknown | Promise<unknown>;
  /** Each transcript event; throw to have it sent again later. */
  onEvent?: (event: TranscriptEvent) => void | Promise<void>;
  /** Streams replies (default: a client signing with the first secret). */
  client?: ConciergeClient;
  /** Where answered deliveries are remembered (default: in memory). */
  store?: DeliveryStore;
  toleranceSeconds?: number;
  /** See {@link VerifyOptions.allowServiceSignatureAlone} (default: false). */
  allowServiceSignatureAlone?: boolean;
  /** A reply streamed after the `202` that failed, or your function throwing (default: `console.error`). */
  onError?: (error: unknown) => void;
}

const respond = (status: number, body: unknown = {}): HookResponse => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const ACCEPTED = respond(202, { received: true });
const DELIVERED = respond(200, { received: true });

const logError = (error: unknown) => console.error('concierge hook:', error);

const isStream = (answer: TurnAnswer): answer is AsyncIterable<string> =>
  typeof answer === 'object' && answer !== null && Symbol.asyncIterator in answer;

/**
 * The framework-free core of a hook endpoint: verify, deduplicate on the delivery id, call your
 * function, and say what to answer. {@link nodeHandler} and {@link fetchHandler} put it on a server.
 */
export function createHookHandler(options: HookHandlerOptions): {
  handle(rawBody: string | Uint8Array, headers: HeaderSource): Promise<HookResponse>;
} {
  let secrets: string[];
  try {
    // A secret missing or too short to be one is refused when the handler is made, not at the first call.
    secrets = checkSecrets(options.secrets);
  } catch (err) {
    throw new TypeError(
      `createHookHandler: ${err instanceof HookVerificationError && err.code === 'no_secret' ? "`secrets` must hold the deployment's signing secret" : (err as Error).message}`,
    );
  }
  const verifying: VerifyOptions = {
    ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
    ...(options.allowServiceSignatureAlone ? { allowServiceSignatureAlone: true } : {}),
  };
  const client = options.client ?? new ConciergeClient({ secret: secrets[0] });
  const store = options.store ?? new MemoryDeliveryStore();
  const onError = options.onError ?? logError;
  /** Calls being answered now: a retry that arrives meanwhile waits for the same answer. */
  const inFlight = new Map<string, Promise<HookResponse>>();

  const answerTurn = async (turn: TurnHook): Promise<HookResponse> => {
    if (!options.onTurn) throw new Error('a turn hook arrived, and no onTurn was given');
    const answer = await options.onTurn(turn, client);
    if (answer === undefined) return ACCEPTED;
    if (typeof answer === 'string') return respond(200, { reply_text: answer });
    if (isStream(answer)) {
      client.stream(turn, answer).catch(onError);
      return ACCEPTED;
    }
    return respond(200, answer);
  };

  const answerTool = async (call: ToolCall): Promise<HookResponse> => {
    if (!options.onTool) throw new Error(`a tool call (${call.tool}) arrived, and no onTool was given`);
    return respond(200, (await options.onTool(call)) ?? null);
  };

  const answer = async (event: HookEvent): Promise<HookResponse> => {
    if (isTurnHook(event)) return answerTurn(event);
    if (isToolCall(event)) return answerTool(event);
    await options.onEvent?.(event);
    return DELIVERED;
  };

  return {
    async handle(rawBody, headers) {
      let event: HookEvent;
      try {
        event = verifyHook(rawBody, headers, secrets, verifying);
      } catch (err) {
        if (!(err instanceof HookVerificationError)) throw err;
        return respond(err.code === 'invalid_body' ? 400 : 401, { error: err.code, message: err.message });
      }
      // A sample from test-hook: its ids match no turn, so it is verified and acknowledged, nothing more.
      if (!isToolCall(event) && event.test) return isTurnHook(event) ? ACCEPTED : DELIVERED;
      const id = isTurnHook(event) ? event.delivery_id : isToolCall(event) ? event.call_id : event.id;
      const running = inFlight.get(id);
      if (running) return running;
      // Registered before anything is awaited, so a retry arriving meanwhile waits for this answer.
      const work = (async () => {
        const kept = await store.get(id);
        if (kept) return kept;
        try {
          const response = await answer(event);
          await store.set(id, response);
          return response;
        } catch (err) {
          onError(err);
          // Not remembered: the service retries a 5xx, and the retry runs your function again.
          return respond(500, { error: 'handler_failed' });
        }
      })();
      inFlight.set(id, work);
      try {
        return await work;
      } finally {
        inFlight.delete(id);
      }
    },
  };
}

const MAX_BODY = 1024 * 1024;

/** A body over {@link MAX_BODY}: answered `413`, the handler not called. */
class BodyTooLarge extends Error {}

async function rawBodyOf(req: IncomingMessage & { body?: unknown }): Promise<Buffer | string> {
  // A framework may have read the body already: as bytes or text it is still the signed original.
  if (Buffer.isBuffer(req.body) || typeof req.body === 'string') return req.body;
  if (req.body !== undefined && req.readableEnded) {
    throw new TypeError(
      'the request body was parsed as JSON before the hook handler: the signature is over the raw bytes, so mount it without express.json() (or with express.raw())',
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new BodyTooLarge('body over 1 MiB');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A hook endpoint for Node's `http` (and Express, Connect, Fastify's raw `req`/`res`): `createServer(nodeHandler({...}))`. */
export function nodeHandler(options: HookHandlerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const hook = createHookHandler(options);
  const onError = options.onError ?? logError;
  return async (req, res) => {
    let response: HookResponse;
    try {
      response =
        req.method === 'POST'
          ? await hook.handle(await rawBodyOf(req), req.headers)
          : respond(405, { error: 'method_not_allowed' });
    } catch (err) {
      onError(err);
      response =
        err instanceof BodyTooLarge
          ? respond(413, { error: 'payload_too_large' })
          : respond(500, { error: 'handler_failed' });
    }
    res.writeHead(response.status, response.headers).end(response.body);
  };
}

/** A hook endpoint for `Request`/`Response` frameworks: Next.js route handlers (`export const POST = fetchHandler({...})`), Hono, Bun, Deno. */
export function fetchHandler(options: HookHandlerOptions): (request: Request) => Promise<Response> {
  const hook = createHookHandler(options);
  const onError = options.onError ?? logError;
  return async (request) => {
    let response: HookResponse;
    try {
      response =
        request.method === 'POST'
          ? await hook.handle(new Uint8Array(await request.arrayBuffer()), request.headers)
          : respond(405, { error: 'method_not_allowed' });
    } catch (err) {
      onError(err);
      response = respond(500, { error: 'handler_failed' });
    }
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}
