import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { mintUserToken, signBody } from '../../sdk/node/src/index.js';
import { createCustomer } from '../../server/src/customers/customer.service.js';
import { openStore, type StoreOptions } from '../../server/src/store/db.js';

/** A customer with its API key in a fresh store, made before the service starts on it. */
export async function seedCustomer(store: StoreOptions): Promise<string> {
  const opened = await openStore(store);
  const { apiKey } = await createCustomer(opened.db, 'Bench hotel');
  await opened.close();
  return apiKey;
}

export interface Deployed {
  deploymentId: string;
  secret: string;
}

/** A management API call with the customer's key; throws on anything but 2xx, saying what came back. */
export async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** A published agent and an active deployment whose hook is `hookUrl`, with limits a load test needs. */
export async function provision(base: string, key: string, hookUrl: string): Promise<Deployed> {
  const job = await api(base, key, 'POST', '/api/v1/agents', { name: 'Front desk', description: 'Bench concierge' });
  while ((await api(base, key, 'GET', job.polling_url)).status !== 'succeeded')
    await new Promise((r) => setTimeout(r, 20));
  await api(base, key, 'POST', `/api/v1/agents/${job.agent_id}/publish`);
  const deployment = await api(base, key, 'POST', '/api/v1/deployments', {
    agent_id: job.agent_id,
    channel_config: { hook_url: hookUrl },
    engagement_rules: { max_pending_turns: 50, turns_per_minute: 600, max_turns_per_conversation: 10_000 },
    runtime_config: { reply_timeout_s: 3600, hook_timeout_ms: 15_000 },
  });
  await api(base, key, 'POST', `/api/v1/deployments/${deployment.id}/activate`);
  return { deploymentId: deployment.id, secret: deployment.signing_secret };
}

export type Frame = { type: string; [key: string]: any };

/** One widget socket, frames handed to `onFrame` as they arrive. */
export class BenchSocket {
  onFrame: (frame: Frame) => void = () => {};
  conversationId = '';

  private constructor(readonly ws: WebSocket) {
    // Binary frames are the agent's voice (README, The agent's own voice): counted, not parsed.
    ws.on('message', (data, isBinary) =>
      this.onFrame(isBinary ? { type: 'pcm', bytes: (data as Buffer).length } : (JSON.parse(String(data)) as Frame)),
    );
  }

  static open(url: string): Promise<BenchSocket> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new BenchSocket(ws)));
      ws.once('error', reject);
    });
  }

  /** Opens a socket to the service and says hello: a new conversation. */
  static async session(serviceUrl: string, dep: Deployed, sub: string): Promise<BenchSocket> {
    const socket = await BenchSocket.open(
      `${serviceUrl.replace(/^http/, 'ws')}/embed/concierge/${dep.deploymentId}/ws`,
    );
    const token = mintUserToken({ secret: dep.secret, deploymentId: dep.deploymentId, sub });
    const ready = await socket.request({ type: 'hello', token }, (f) => f.type === 'ready' || f.type === 'error');
    if (ready.type !== 'ready') throw new Error(`hello refused: ${JSON.stringify(ready)}`);
    socket.conversationId = ready.conversation_id;
    return socket;
  }

  /** Sends a frame and resolves with the first frame that `until` accepts. */
  request(frame: object, until: (f: Frame) => boolean): Promise<Frame> {
    return new Promise((resolve) => {
      this.onFrame = (f) => {
        if (until(f)) resolve(f);
      };
      this.ws.send(JSON.stringify(frame));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** A socket's frames kept in order, to wait for one that comes after a point (several may arrive in one read). */
export class FrameLog {
  readonly frames: Frame[] = [];
  private wake: (() => void) | undefined;

  constructor(readonly socket: BenchSocket) {
    socket.onFrame = (f) => {
      this.frames.push(f);
      this.wake?.();
    };
  }

  /** The first frame from `from` on that `match` accepts, with its index. */
  async next(match: (f: Frame) => boolean, from = 0): Promise<{ frame: Frame; at: number }> {
    for (;;) {
      const index = this.frames.findIndex((f, i) => i >= from && match(f));
      if (index >= 0) return { frame: this.frames[index]!, at: index };
      await new Promise<void>((r) => (this.wake = r));
    }
  }
}

/** POSTs with one kept-alive connection per agent; resolves with the status once the body is read. */
export function post(agent: Agent, url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface HookCall {
  turn_id: string;
  conversation_id: string;
  reply_url: string;
}

/**
 * The customer's server, bare node:http: every hook call is answered 202, then handed to
 * `onHook` (which may post the signed reply).
 */
export async function startCustomer(
  onHook: (call: HookCall) => void,
): Promise<{ hookUrl: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(202).end();
      onHook(JSON.parse(Buffer.concat(chunks).toString('utf8')) as HookCall);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    hookUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The signed deferred reply to one hook call, as a customer would send it. */
export function replyTo(agent: Agent, secret: string, call: HookCall, text: string): Promise<number> {
  const body = JSON.stringify({ conversation_id: call.conversation_id, turn_id: call.turn_id, reply_text: text });
  return post(agent, call.reply_url, body, { 'x-service-signature': signBody(secret, body) });
}
