import { type ModelBehaviour, type ModelServer, startModelServer } from './model-server.js';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { serverFrame } from '#protocol/frames';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import {
  type Client,
  client,
  createPublishedAgent,
  createReadyAgent,
  type ServiceOptions,
  type StoreKind,
  startService,
  type TestService,
} from './harness.js';

export interface HookCall {
  /** The path called: `/hook`, or `/transcript...` (any path under it reaches the transcript list). */
  url: string;
  /** When it arrived (ms since the epoch). */
  at: number;
  headers: IncomingMessage['headers'];
  raw: string;
  body: any;
}

export type HookBehaviour = (call: HookCall, res: ServerResponse) => void;

/** A customer's server on a random port: records every hook call and answers as told. */
export async function startCustomerServer(behaviour: HookBehaviour = (_c, res) => res.writeHead(202).end()) {
  const calls: HookCall[] = [];
  const transcript: HookCall[] = [];
  const state = { behaviour, transcriptStatus: 200, transcriptHeaders: {} as Record<string, string> };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const call = { url: req.url ?? '', at: Date.now(), headers: req.headers, raw, body: JSON.parse(raw) };
      if (call.url.startsWith('/transcript')) {
        transcript.push(call);
        res.writeHead(state.transcriptStatus, state.transcriptHeaders).end();
        return;
      }
      calls.push(call);
      state.behaviour(call, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    hookUrl: `${base}/hook`,
    transcriptUrl: `${base}/transcript`,
    calls,
    transcript,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A header of a recorded request (a Delivery's `request.headers`), read without regard to case. */
export const headerOf = (headers: Record<string, string>, name: string): string | undefined =>
  Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];

export const sign = (secret: string, body: string | Buffer): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export interface Deployed {
  api: Client;
  apiKey: string;
  deploymentId: string;
  secret: string;
}

/** What the helpers need of a service: in-process ({@link TestService}) or a real process. */
export type ServiceRef = Pick<TestService, 'url' | 'newCustomer'>;

/** A customer with a published agent and an active deployment pointing at `hookUrl`. */
export async function deploy(
  service: ServiceRef,
  channel: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Deployed> {
  const { apiKey } = await service.newCustomer('Hotel');
  const api = client(service.url, apiKey);
  const agentId = await createPublishedAgent(api, 'Front desk');
  const created = await api.post('/api/v1/deployments', { agent_id: agentId, channel_config: channel, ...extra });
  if (created.status !== 201) throw new Error(`deploy: ${created.status} ${JSON.stringify(created.body)}`);
  const deploymentId = created.body.data.id;
  const activated = await api.post(`/api/v1/deployments/${deploymentId}/activate`);
  if (activated.status !== 200) throw new Error(`activate: ${activated.status}`);
  return { api, apiKey, deploymentId, secret: created.body.data.signing_secret };
}

/**
 * An agent published with `draftSpec` and deployed with no hook, live (README, An agent without a
 * server): `visitor(sub)` opens a widget on it and says hello.
 */
export async function deployAgent(
  service: ServiceRef,
  api: Client,
  draftSpec: Record<string, unknown>,
  deployment: Record<string, unknown> = {},
) {
  const agentId = await createReadyAgent(api);
  const saved = await api.put(`/api/v1/agents/${agentId}`, { draft_spec: draftSpec });
  if (saved.status !== 200) throw new Error(`draft: ${saved.status} ${JSON.stringify(saved.body)}`);
  const published = await api.post(`/api/v1/agents/${agentId}/publish`);
  if (published.status !== 200) throw new Error(`publish: ${published.status} ${JSON.stringify(published.body)}`);
  const created = await api.post('/api/v1/deployments', { agent_id: agentId, channel_config: {}, ...deployment });
  if (created.status !== 201) throw new Error(`deploy: ${created.status} ${JSON.stringify(created.body)}`);
  const deploymentId: string = created.body.data.id;
  const secret: string = created.body.data.signing_secret;
  const activated = await api.post(`/api/v1/deployments/${deploymentId}/activate`);
  if (activated.status !== 200) throw new Error(`activate: ${activated.status} ${JSON.stringify(activated.body)}`);
  return {
    agentId,
    deploymentId,
    secret,
    async visitor(sub = 'guest-1', claims?: Record<string, unknown>) {
      const widget = await Widget.open(service, deploymentId);
      const ready = await widget.hello(await mintToken(secret, deploymentId, { sub, ...(claims ? { claims } : {}) }));
      return { widget, conversationId: ready.conversation_id as string };
    },
  };
}

export async function mintToken(
  secret: string,
  audience: string,
  options: { sub?: string; ttlS?: number; iat?: number; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const iat = options.iat ?? Math.floor(Date.now() / 1000);
  return new SignJWT({ ...options.claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(options.sub ?? 'guest-1')
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.ttlS ?? 600))
    .sign(new TextEncoder().encode(secret));
}

/** A widget's socket: collects frames and waits for the ones a test expects. */
export class Widget {
  readonly frames: any[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      // The agent's voice (README, The agent's own voice): PCM, kept in order among the frames.
      if (isBinary) {
        this.frames.push({ type: 'pcm', pcm: Buffer.from(data as Buffer) });
        for (const wake of this.waiters.splice(0)) wake();
        return;
      }
      const frame: unknown = JSON.parse(String(data));
      // Every frame the server sends must be exactly one the protocol module describes.
      serverFrame.parse(frame);
      this.frames.push(frame);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static open(
    service: Pick<TestService, 'url'>,
    deploymentId: string,
    headers: Record<string, string> = {},
  ): Promise<Widget> {
    const ws = new WebSocket(`${service.url.replace('http', 'ws')}/embed/concierge/${deploymentId}/ws`, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Widget(ws)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Says hello with `token`, and where it resumes or in what language (`language`), as the widget does. */
  async hello(
    token: string,
    said: { conversation_id?: string; last_seq?: number; language?: string; browser_recognition?: boolean } = {},
  ): Promise<any> {
    this.send({ type: 'hello', token, ...said });
    return this.next('ready');
  }

  /** The first frame of `type` not yet taken by an earlier call. */
  next(type: string, timeoutMs = 5_000): Promise<any> {
    return this.nextOf([type], timeoutMs);
  }

  /** The first frame of any of `types` not yet taken by an earlier call. */
  async nextOf(types: readonly string[], timeoutMs = 5_000): Promise<any> {
    const type = types.join(' or ');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((f, i) => types.includes(f.type) && !this.taken.has(i));
      if (index >= 0) {
        this.taken.add(index);
        return this.frames[index];
      }
      if (Date.now() > deadline)
        throw new Error(
          `no ${type} frame; got ${JSON.stringify(this.frames, (key, value) => (key === 'pcm' ? `${value.data.length} bytes` : value))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(deadline - Date.now(), 0));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private readonly taken = new Set<number>();

  close(): void {
    this.ws.close();
  }
}

export async function postReply(
  service: Pick<TestService, 'url'>,
  deploymentId: string,
  body: unknown,
  secret: string,
  options: { raw?: string; signature?: string; contentType?: string } = {},
) {
  const raw = options.raw ?? JSON.stringify(body);
  const res = await fetch(`${service.url}/embed/concierge/${deploymentId}/replies`, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/json',
      ...(options.signature !== '' ? { 'x-service-signature': options.signature ?? sign(secret, raw) } : {}),
    },
    body: raw,
  });
  return { status: res.status, body: (await res.json()) as any };
}

export type CustomerServer = Awaited<ReturnType<typeof startCustomerServer>>;

/** A service on `kind` for the suite, and a customer server of each test's own. */
export function serviceWithCustomer(
  kind: StoreKind,
  options: ServiceOptions = {},
): { service(): TestService; customer(): CustomerServer } {
  let service: TestService | undefined;
  let customer: CustomerServer | undefined;
  beforeAll(async () => {
    service = await startService(kind, options);
  });
  afterAll(async () => {
    await service?.close();
  });
  beforeEach(async () => {
    customer = await startCustomerServer();
  });
  afterEach(async () => {
    await customer?.close();
  });
  return { service: () => service!, customer: () => customer! };
}

/** A real service of `kind` and a model server, for the suite: started before its tests, closed after. */
export function serviceWithModel(
  kind: StoreKind,
  behaviour?: ModelBehaviour,
): { service(): TestService; model(): ModelServer } {
  let service: TestService | undefined;
  let model: ModelServer | undefined;
  beforeAll(async () => {
    model = await startModelServer(behaviour);
    service = await startService(kind);
  });
  afterAll(async () => {
    await service?.close();
    await model?.close();
  });
  return { service: () => service!, model: () => model! };
}
