import type { ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ModelCall, startModelServer, streamOf, toolCallStream } from '../../server/test/model-server.js';
import { cpuSeconds, startTarget } from '../process.js';
import { quantile } from '../stats.js';
import { api, BenchSocket, type Deployed, type Frame, FrameLog } from './kit.js';
import { startConcierge } from './service.js';

export const MODELS = { turns: 300, warmUp: 30, toolTurns: 200, cpuReplies: 200 } as const;

/** The first sentence, whole in the model's first word (so the part is due at once), then the rest in pieces. */
const FIRST = 'Breakfast is served from seven in the garden room. ';
const REST = 'On weekends it is served until eleven, and the terrace opens when the weather is fine.';

type Quantiles = { p50: number; p99: number };
const q = (xs: number[]): Quantiles => ({
  p50: quantile(xs.slice(MODELS.warmUp), 0.5),
  p99: quantile(xs.slice(MODELS.warmUp), 0.99),
});

export interface ModelFigures {
  /** The model's first token written → the first reply part on the visitor's socket, and the same through a bare relay (ms). */
  firstPart: Quantiles;
  bareRelay: Quantiles;
  /** A tool's answer sent → the model's next request received (ms). */
  toolToModel: Quantiles;
  /** CPU ms per streamed reply of the service and of the bare relay, the same streams. */
  cpuPerReply: { service: number; relay: number };
}

/** The model's stream: the first sentence in one event (its write time kept), the rest in small pieces. */
function answer(call: ModelCall, res: ServerResponse, wrote: (at: number) => void): void {
  const events = streamOf(call.body.model, FIRST + REST);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  // The role chunk, then the whole first sentence as one delta.
  const head = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: FIRST } }] })}\n\n`;
  wrote(performance.now());
  res.write(events[0]! + head);
  const rest = streamOf(call.body.model, REST).slice(1);
  res.end(rest.join(''));
}

/** An agent answering with the model at `baseUrl` (and `tools`), deployed with no hook, live. */
async function modelDeployment(base: string, key: string, baseUrl: string, tools: unknown[] = []): Promise<Deployed> {
  const endpoint = await api(base, key, 'POST', '/api/v1/model-endpoints', { name: 'Bench model', base_url: baseUrl });
  const job = await api(base, key, 'POST', '/api/v1/agents', { name: 'Model desk' });
  while ((await api(base, key, 'GET', job.polling_url)).status !== 'succeeded')
    await new Promise((r) => setTimeout(r, 20));
  await api(base, key, 'PUT', `/api/v1/agents/${job.agent_id}`, {
    draft_spec: { responder: { type: 'model', endpoint_id: endpoint.id, model: 'bench', tools } },
  });
  await api(base, key, 'POST', `/api/v1/agents/${job.agent_id}/publish`);
  const deployment = await api(base, key, 'POST', '/api/v1/deployments', {
    agent_id: job.agent_id,
    channel_config: {},
    engagement_rules: { max_pending_turns: 50, turns_per_minute: 600, max_turns_per_conversation: 10_000 },
    runtime_config: { reply_timeout_s: 3600 },
  });
  await api(base, key, 'POST', `/api/v1/deployments/${deployment.id}/activate`);
  return { deploymentId: deployment.id, secret: deployment.signing_secret };
}

/** Sends `frame`; resolves when the first frame `until` accepts came after it, with when, and the log's length then. */
async function asked(
  log: FrameLog,
  frame: object,
  until: (f: Frame) => boolean,
): Promise<{ at: number; from: number }> {
  const from = log.frames.length;
  log.socket.ws.send(JSON.stringify(frame));
  const found = await log.next(until, from);
  return { at: performance.now(), from: found.at };
}

/**
 * A scripted OpenAI-compatible model in this process, the service compiled on SQLite answering with
 * it, and a bare relay of the same stream in a process of its own: what the service adds to a
 * model's words on their way to the visitor, and what a tool round costs.
 */
export async function modelFigures(): Promise<ModelFigures> {
  let wroteAt = 0;
  const model = await startModelServer((call, res) => answer(call, res, (at) => (wroteAt = at)));
  const concierge = await startConcierge(() => {}, { env: { MODEL_CONCURRENCY: '64' } });
  const relay = await startTarget('bench/targets/bare-relay.ts');
  const tools = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      toolAnsweredAt = performance.now();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"free":true}');
    });
  });
  let toolAnsweredAt = 0;
  await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
  const node = concierge.nodes[0]!;
  try {
    const dep = await modelDeployment(node.url, concierge.apiKey, model.baseUrl);
    const socket = new FrameLog(await BenchSocket.session(node.url, dep, 'visitor'));
    const firstPart: number[] = [];
    for (let i = 0; i < MODELS.turns; i++) {
      const { at, from } = await asked(
        socket,
        { type: 'user_turn', client_turn_id: `t${i}`, text: 'When is breakfast?', mode: 'text' },
        (f) => f.type === 'reply_part',
      );
      firstPart.push(at - wroteAt);
      await socket.next((f) => f.type === 'reply', from);
    }

    // The same stream through the bare relay.
    const bare = new FrameLog(await BenchSocket.open(relay.url.replace(/^http/, 'ws')));
    const body = JSON.stringify({
      model: 'bench',
      messages: [{ role: 'user', content: 'When is breakfast?' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 400,
    });
    const bareFirst: number[] = [];
    for (let i = 0; i < MODELS.turns; i++) {
      const { at, from } = await asked(bare, { url: model.url, body }, (f) => f.type === 'delta');
      bareFirst.push(at - wroteAt);
      await bare.next((f) => f.type === 'done', from);
    }

    // CPU per streamed reply: the same replies through each, one after another.
    const cpu = async (pid: number, one: () => Promise<unknown>) => {
      const before = cpuSeconds(pid);
      for (let i = 0; i < MODELS.cpuReplies; i++) await one();
      return ((cpuSeconds(pid) - before) * 1000) / MODELS.cpuReplies;
    };
    let n = 0;
    const service = await cpu(node.child.pid!, () =>
      asked(
        socket,
        { type: 'user_turn', client_turn_id: `cpu${n++}`, text: 'When is breakfast?', mode: 'text' },
        (f) => f.type === 'reply',
      ),
    );
    const relayCpu = await cpu(relay.child.pid!, () => asked(bare, { url: model.url, body }, (f) => f.type === 'done'));
    socket.socket.close();
    bare.socket.close();

    // A tool round: the tool's answer sent → the model asked again with it.
    let secondAskedAt = 0;
    model.state.behaviour = (call, res) => {
      if (!call.body.messages.some((m) => m.role === 'tool'))
        return void res
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(toolCallStream(call.body.model, [{ name: 'check_room', arguments: { night: 'friday' } }]).join(''));
      secondAskedAt = performance.now();
      answer(call, res, () => {});
    };
    const url = `http://127.0.0.1:${(tools.address() as AddressInfo).port}/tool`;
    const withTool = await modelDeployment(node.url, concierge.apiKey, model.baseUrl, [
      { name: 'check_room', description: 'Is a room free', parameters: { type: 'object' }, url },
    ]);
    const asker = new FrameLog(await BenchSocket.session(node.url, withTool, 'tool-visitor'));
    const toolToModel: number[] = [];
    for (let i = 0; i < MODELS.toolTurns; i++) {
      await asked(
        asker,
        { type: 'user_turn', client_turn_id: `tool${i}`, text: 'Free on Friday?', mode: 'text' },
        (f) => f.type === 'reply',
      );
      toolToModel.push(secondAskedAt - toolAnsweredAt);
    }
    asker.socket.close();
    return {
      firstPart: q(firstPart),
      bareRelay: q(bareFirst),
      toolToModel: q(toolToModel),
      cpuPerReply: { service, relay: relayCpu },
    };
  } finally {
    tools.close();
    await relay.stop();
    await concierge.stop();
    await model.close();
  }
}
