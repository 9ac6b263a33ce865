import type { IncomingMessage, ServerResponse } from 'node:http';
import { loopbackEndpoint } from './loopback-endpoint.js';

/** One chat completion request as the model server read it. */
export interface ModelCall {
  authorization: string | undefined;
  body: {
    model: string;
    messages: { role: string; content: string | null; tool_call_id?: string; tool_calls?: unknown[] }[];
    tools?: { type: 'function'; function: { name: string; parameters: unknown } }[];
    /** Absent on a call that wants one JSON answer (a judge's, an analysis's), which names its schema. */
    stream?: true;
    response_format?: { type: 'json_schema'; json_schema: { name: string; schema: unknown } };
    max_tokens?: number;
    temperature?: number;
  };
}

/** How the server answers a call; by default it {@link writes} a fixed reply. */
export type ModelBehaviour = (call: ModelCall, res: ServerResponse, req: IncomingMessage) => void;

/** A `chat.completion.chunk` as OpenAI streams it. */
const chunk = (model: string, delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

/** The bytes of a whole stream saying `text`: deltas of uneven sizes, the finish, the usage chunk, `[DONE]`. */
export function streamOf(model: string, text: string, options: { done?: boolean } = {}): string[] {
  const events = [chunk(model, { role: 'assistant', content: '' })];
  const sizes = [1, 7, 2, 13, 4];
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length]!;
    events.push(chunk(model, { content: text.slice(at, at + size) }));
    at += size;
  }
  if (options.done === false) return events.map((e) => `data: ${e}\n\n`);
  events.push(chunk(model, {}, 'stop'));
  events.push(
    JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created: 0,
      model,
      choices: [],
      usage: { prompt_tokens: 120, completion_tokens: 17, total_tokens: 137 },
    }),
  );
  events.push('[DONE]');
  return events.map((e) => `data: ${e}\n\n`);
}

/** The bytes of a stream calling tools: each call's arguments arrive in several pieces, as OpenAI streams them. */
export function toolCallStream(model: string, calls: { name: string; arguments: unknown }[]): string[] {
  const events = [chunk(model, { role: 'assistant', content: null })];
  calls.forEach((call, index) => {
    const args = JSON.stringify(call.arguments);
    events.push(
      chunk(model, {
        tool_calls: [
          { index, id: `call_${index}_${call.name}`, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (let at = 0; at < args.length; at += 5)
      events.push(chunk(model, { tool_calls: [{ index, function: { arguments: args.slice(at, at + 5) } }] }));
  });
  events.push(chunk(model, {}, 'tool_calls'), '[DONE]');
  return events.map((e) => `data: ${e}\n\n`);
}

/**
 * Writes `events` as a server does: byte slices that cut events, lines and UTF-8 characters in
 * two, `pauseMs` apart; `end: false` leaves the connection cut without an end.
 */
export function send(res: ServerResponse, events: string[], pauseMs = 2, end = true): void {
  const bytes = Buffer.from(events.join(''));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const cuts = [5, 31, 2, 77, 13];
  let at = 0;
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (at >= bytes.length) return end ? void res.end() : void res.destroy();
    const size = cuts[i++ % cuts.length]!;
    res.write(bytes.subarray(at, at + size));
    at += size;
    setTimeout(next, pauseMs);
  };
  next();
}

/** A whole `chat.completion` answering with `content`, as OpenAI answers a call that is not streamed. */
export function complete(res: ServerResponse, model: string, content: string): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 },
    }),
  );
}

/** Answers every call with `text`, streamed. */
export const writes =
  (text: string, pauseMs = 2): ModelBehaviour =>
  (call, res) =>
    send(res, streamOf(call.body.model, text), pauseMs);

/**
 * An OpenAI-compatible chat completions endpoint in the test's process (`POST /v1/chat/completions`):
 * it refuses a body that is not the documented streaming request, and answers as told.
 */
export async function startModelServer(behaviour: ModelBehaviour = writes('Breakfast is served from 7 to 10. Enjoy!')) {
  const calls: ModelCall[] = [];
  const endpoint = await loopbackEndpoint('/v1/chat/completions', behaviour, (raw, req, res, answer) => {
    let body: ModelCall['body'];
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"not JSON"}}');
    }
    const streamed =
      body.stream === true &&
      (body as { stream_options?: { include_usage?: boolean } }).stream_options?.include_usage === true &&
      Number.isInteger(body.max_tokens);
    // OpenAI's structured outputs: one answer, its JSON Schema named.
    const structured =
      body.stream === undefined &&
      body.response_format?.type === 'json_schema' &&
      typeof body.response_format.json_schema?.name === 'string' &&
      typeof body.response_format.json_schema.schema === 'object';
    const documented =
      req.method === 'POST' &&
      req.url === '/v1/chat/completions' &&
      /^application\/json/.test(req.headers['content-type'] ?? '') &&
      typeof body.model === 'string' &&
      Array.isArray(body.messages) &&
      body.messages.every((m) => typeof m.role === 'string') &&
      (streamed || structured);
    if (!documented)
      return void res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'not a streaming chat completion request' } }));
    const call = { authorization: req.headers.authorization, body };
    calls.push(call);
    answer(call, res, req);
  });
  return { ...endpoint, baseUrl: endpoint.url.replace(/\/chat\/completions$/, ''), calls };
}

export type ModelServer = Awaited<ReturnType<typeof startModelServer>>;
