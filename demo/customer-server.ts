import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ConciergeClient, type HookEvent, mintUserToken, type TurnHook, verifyHook } from '../sdk/node/src/index.js';
import { localBaseUrl } from '../server/src/http/public-address.js';
import { answerFor, partsOf } from './answers.js';
import { standInAnswer } from './stand-in-analyst.js';
import { api } from './management-api.js';
import { type DemoDefault, demoResponder, type Provisioned, provision, switchDemoResponder } from './provision.js';

/** How the fake customer answers the turn hook; QA switches it from the panel. `stream`: the reply in parts, {@link STREAM_EVERY_MS} apart, then whole. */
export const MODES = [
  'deferred',
  'stream',
  'sync',
  'hook_500',
  'hook_400',
  'duplicate',
  'bad_signature',
  'no_reply',
] as const;
export const STREAM_EVERY_MS = 150;
export type Mode = (typeof MODES)[number];

export interface Behaviour {
  mode: Mode;
  /** How long the deferred reply takes, in ms. */
  delayMs: number;
  /** Lifetime of the user tokens minted from now on, in seconds (QA: short ones make the widget refresh every second). */
  tokenTtlS: number;
}

export interface DemoOptions {
  serviceUrl: string;
  /** Where visitors' browsers reach the service, when not at `serviceUrl` (a proxy in front of it). */
  publicServiceUrl?: string;
  apiKey: string;
  port: number;
  host: string;
  /** Where the provisioned deployment is remembered across restarts. */
  statePath?: string;
  /** Who answers a newly provisioned agent (default the hotel's server; `npm start`: its pages). */
  answeredBy?: DemoDefault;
  /** Lifetime of the user tokens it mints (default 900 s); the widget refreshes them a minute before. */
  tokenTtlS?: number;
}

export interface Demo {
  url: string;
  deployment: Provisioned;
  close(): Promise<void>;
}

interface WireEntry {
  at: string;
  kind: 'hook' | 'reply' | 'transcript' | 'token';
  summary: string;
  detail: Record<string, unknown>;
}

/** The guest the demo site signs in: a real site would put its own user's name in the token. */
export const DEMO_GUEST = 'Maya';

const SITE = join(import.meta.dirname, 'site');
const PAGES: Record<string, string> = {
  'GET /': 'index.html',
  'GET /qa': 'qa.html',
  'GET /hostile': 'hostile.html',
  'GET /scripted': 'scripted.html',
  'GET /book': 'book.html',
  'GET /rooms': 'rooms.html',
  'GET /guide': 'guide.html',
  'GET /guide/de': 'guide.de.html',
  'GET /guide/fr': 'guide.fr.html',
  'GET /guide/es': 'guide.es.html',
};
const ASSETS: Record<string, [file: string, type: string]> = {
  'GET /site.css': ['site.css', 'text/css'],
  'GET /hostile.css': ['hostile.css', 'text/css'],
  'GET /favicon.svg': ['favicon.svg', 'image/svg+xml'],
  'GET /qa.js': ['qa.js', 'text/javascript'],
  'GET /queue.js': ['queue.js', 'text/javascript'],
  'GET /scripted.js': ['scripted.js', 'text/javascript'],
  'GET /site.js': ['site.js', 'text/javascript'],
  'GET /book.js': ['book.js', 'text/javascript'],
};
const MAX_BODY = 256 * 1024;
const VISITOR_COOKIE = 'demo_visitor';

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The parts as a language model gives them: each {@link STREAM_EVERY_MS} after the one before. */
async function* written(parts: string[]): AsyncGenerator<string> {
  for (const [i, part] of parts.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, STREAM_EVERY_MS));
    yield part;
  }
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/**
 * The demo customer: a small hotel's site embedding the widget with one script tag, and the
 * hotel's server, written with the Node SDK (`sdk/node`): it mints user tokens, takes the turn
 * hook (verifying its signature), answers 202 and posts the signed reply after a short delay. The QA panel on the page watches the wire
 * live (server-sent events) and switches the behaviour.
 */
export async function startDemo(o: DemoOptions): Promise<Demo> {
  const behaviour: Behaviour = { mode: 'deferred', delayMs: 800, tokenTtlS: o.tokenTtlS ?? 900 };
  const wire: WireEntry[] = [];
  const watchers = new Set<ServerResponse>();
  let deployment: Provisioned | undefined;
  /** The hotel's own address (once it listens), for the links in its answers. */
  let siteUrl = '';
  /** The visitor's conversation a transcript event last came for (a test run's left out): the one QA ends from its panel. */
  let lastConversationId: string | undefined;
  const testConversations = new Set<string>();

  const record = (kind: WireEntry['kind'], summary: string, detail: Record<string, unknown>) => {
    const entry = { at: new Date().toISOString(), kind, summary, detail };
    wire.push(entry);
    if (wire.length > 200) wire.shift();
    for (const watcher of watchers) watcher.write(`data: ${JSON.stringify(entry)}\n\n`);
  };

  /** The SDK's client, its requests recorded on the wire for the QA panel; `bad_signature` signs with a secret that is not the deployment's. */
  const clientFor = (secret: string) =>
    new ConciergeClient({
      secret,
      retry: { attempts: 3 },
      fetch: async (url, init) => {
        const sent = JSON.parse(String(init?.body)) as Record<string, unknown>;
        const label = 'part' in sent ? `part ${String(sent.part)}` : 'reply';
        try {
          const res = await fetch(url, init);
          record('reply', `${label} → ${res.status}`, {
            status: res.status,
            body: await res
              .clone()
              .json()
              .catch(() => null),
            sent,
          });
          return res;
        } catch (err) {
          record('reply', `${label} → network error`, { error: String(err), sent });
          throw err;
        }
      },
    });

  /** Verified with the SDK; the body is still shown when the signature is bad, so QA sees what came. */
  const verified = (raw: Buffer, headers: IncomingMessage['headers']): { call: HookEvent; verified: boolean } => {
    try {
      return { call: verifyHook(raw, headers, deployment!.signingSecret), verified: true };
    } catch {
      return { call: JSON.parse(raw.toString('utf8')) as HookEvent, verified: false };
    }
  };

  const onHook = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const checked = verified(raw, req.headers);
    const call = checked.call as TurnHook;
    const { mode, delayMs } = behaviour;
    record(
      'hook',
      `turn "${call.text.slice(0, 60)}" (${call.mode}, ${call.language}) → ${checked.verified ? 'signature ok' : 'BAD SIGNATURE'}, ${mode}`,
      {
        signature: req.headers['x-service-signature'],
        delivery: req.headers['x-service-delivery'],
        verified: checked.verified,
        behaviour: { ...behaviour },
        body: call,
      },
    );
    if (!checked.verified) return json(res, 401, { error: 'bad signature' });
    if (mode === 'hook_500') return json(res, 500, { error: 'the hotel server is down (QA)' });
    if (mode === 'hook_400') return json(res, 400, { error: 'the hotel server refuses this turn (QA)' });
    const answer = answerFor(call.text, siteUrl, call.language, call.page);
    const reply = { reply_text: answer.text, ...(answer.actions ? { actions: answer.actions } : {}) };
    // A handoff is only ever said in the hook's own answer: whatever the mode, it is answered at once.
    if (answer.handoff) return json(res, 200, { ...reply, handoff: { reason: answer.handoff } });
    if (mode === 'sync') return json(res, 200, reply);
    res.writeHead(202).end();
    if (mode === 'no_reply') return;
    const client = clientFor(mode === 'bad_signature' ? 'whsec_not_the_secret' : deployment!.signingSecret);
    const options = answer.actions ? { actions: answer.actions } : {};
    setTimeout(async () => {
      try {
        // As a language model writes: each part once it is there, then the whole reply.
        if (mode === 'stream') await client.stream(call, written(partsOf(answer.text)), options);
        else await client.reply(call, answer.text, options);
        if (mode === 'duplicate') await client.reply(call, answer.text, options);
      } catch {
        // Recorded on the wire already: a refused reply is what QA looks at.
      }
    }, delayMs);
  };

  const onTranscript = async (req: IncomingMessage, res: ServerResponse) => {
    const checked = verified(await readBody(req), req.headers);
    const event = checked.call as {
      id: string;
      type: string;
      conversation_id?: string;
      data?: { user?: { sub?: string } };
    };
    if (event.data?.user?.sub?.startsWith('test-run:') && event.conversation_id)
      testConversations.add(event.conversation_id);
    if (checked.verified && event.conversation_id && !testConversations.has(event.conversation_id))
      lastConversationId = event.conversation_id;
    record('transcript', `${event.type} ${checked.verified ? '' : '(BAD SIGNATURE)'}`.trim(), {
      event_id: req.headers['x-service-event-id'],
      verified: checked.verified,
      body: event,
    });
    json(res, checked.verified ? 200 : 401, { received: checked.verified });
  };

  const onToken = async (req: IncomingMessage, res: ServerResponse) => {
    // The visitor is whoever holds our cookie: a real site would use its own login here.
    const known = /(?:^|;\s*)demo_visitor=([\w-]{8,64})/.exec(req.headers.cookie ?? '')?.[1];
    const visitor = known ?? `guest-${randomUUID()}`;
    const token = mintUserToken({
      secret: deployment!.signingSecret,
      deploymentId: deployment!.deploymentId,
      sub: visitor,
      // The signed-in guest: the agent greets them by name (README, Variables and guardrails).
      name: DEMO_GUEST,
      ctx: { room: '214' },
      ttl: behaviour.tokenTtlS,
    });
    record('token', `token minted for ${visitor}`, { sub: visitor });
    json(
      res,
      200,
      { token },
      { 'set-cookie': `${VISITOR_COOKIE}=${visitor}; Path=/; HttpOnly; SameSite=Lax`, 'cache-control': 'no-store' },
    );
  };

  const browserServiceUrl = o.publicServiceUrl ?? o.serviceUrl;
  const page = (name: string) =>
    readFileSync(join(SITE, name), 'utf8')
      .replaceAll('{{SERVICE_URL}}', browserServiceUrl)
      // Also asked while the demo provisions (the service fetching the guide), before a deployment exists.
      .replaceAll('{{DEPLOYMENT_ID}}', deployment?.deploymentId ?? '');

  // The strictest policy the widget must live under: no inline script or style, no eval.
  const csp = () =>
    [
      "default-src 'self'",
      `script-src 'self' ${browserServiceUrl}`,
      `connect-src 'self' ${browserServiceUrl} ${browserServiceUrl.replace(/^http/, 'ws')}`,
      "style-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; ');

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const route = `${req.method} ${path}`;
    const handle = async () => {
      const html = PAGES[route];
      if (html)
        return res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp() })
          .end(page(html));
      const asset = ASSETS[route];
      if (asset) return res.writeHead(200, { 'content-type': asset[1] }).end(readFileSync(join(SITE, asset[0])));
      if (route === 'POST /token') return onToken(req, res);
      if (route === 'POST /hook') return onHook(req, res);
      if (route === 'POST /transcript') return onTranscript(req, res);
      if (route === 'POST /analyst/v1/chat/completions') {
        const answer = standInAnswer(JSON.parse((await readBody(req)).toString('utf8') || '{}'));
        return json(res, answer.status, answer.body);
      }
      if (route === 'GET /qa/behaviour') return json(res, 200, { ...behaviour, modes: MODES });
      if (route === 'GET /qa/wire') return json(res, 200, wire);
      if (route === 'POST /qa/behaviour') {
        const next = JSON.parse((await readBody(req)).toString('utf8') || '{}') as Partial<Behaviour>;
        if (next.mode !== undefined && !MODES.includes(next.mode))
          return json(res, 400, { error: `mode must be one of ${MODES.join(', ')}` });
        if (
          next.delayMs !== undefined &&
          !(Number.isInteger(next.delayMs) && next.delayMs >= 0 && next.delayMs <= 60_000)
        )
          return json(res, 400, { error: 'delayMs must be 0..60000' });
        if (
          next.tokenTtlS !== undefined &&
          !(Number.isInteger(next.tokenTtlS) && next.tokenTtlS >= 1 && next.tokenTtlS <= 86_400)
        )
          return json(res, 400, { error: 'tokenTtlS must be 1..86400' });
        Object.assign(
          behaviour,
          next.mode === undefined ? {} : { mode: next.mode },
          next.delayMs === undefined ? {} : { delayMs: next.delayMs },
          next.tokenTtlS === undefined ? {} : { tokenTtlS: next.tokenTtlS },
        );
        return json(res, 200, behaviour);
      }
      // QA ends the last conversation as the front desk would close it (README, A person in the conversation): its analysis follows.
      if (route === 'POST /qa/end') {
        if (!lastConversationId) return json(res, 409, { error: 'no conversation yet: talk to the concierge first' });
        const closed = await api(
          o.serviceUrl,
          deployment!.apiKey,
          'POST',
          `/api/v1/conversations/${lastConversationId}/close`,
        );
        return json(res, closed.status === 200 ? 200 : 409, {
          conversation_id: lastConversationId,
          ...(closed.status === 200
            ? {}
            : { error: closed.body?.error?.message ?? `the service answered ${closed.status}` }),
        });
      }
      if (route === 'GET /qa/responder') return json(res, 200, await demoResponder(o.serviceUrl, deployment!));
      if (route === 'POST /qa/responder') {
        const next = JSON.parse((await readBody(req)).toString('utf8') || '{}') as {
          responder?: string;
          endpointId?: string;
          model?: string;
        };
        if (next.responder === 'hook' || next.responder === 'knowledge')
          return json(res, 200, await switchDemoResponder(o.serviceUrl, deployment!, { responder: next.responder }));
        if (next.responder !== 'model' || !next.endpointId || !next.model?.trim())
          return json(res, 400, {
            error: 'responder must be hook, knowledge, or model with an endpointId and a model',
          });
        return json(
          res,
          200,
          await switchDemoResponder(o.serviceUrl, deployment!, {
            responder: 'model',
            endpointId: next.endpointId,
            model: next.model.trim(),
          }),
        );
      }
      if (route === 'GET /qa/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        for (const entry of wire) res.write(`data: ${JSON.stringify(entry)}\n\n`);
        watchers.add(res);
        req.on('close', () => watchers.delete(res));
        return;
      }
      json(res, 404, { error: 'not found' });
    };
    handle().catch((err) => {
      if (!res.headersSent) json(res, 400, { error: String(err instanceof Error ? err.message : err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `Port ${o.port} is already in use: stop what holds it, or set DEMO_PORT to a free port (DEMO_PORT=0 picks one).`,
            )
          : err,
      ),
    );
    server.listen(o.port, o.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  // The service's host on another port: another origin (CORS and the Origin check are real), and the
  // same name as every link the service prints.
  const url = localBaseUrl(o.host, port);
  siteUrl = url;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const watcher of watchers) watcher.end();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  try {
    deployment = await provision(
      o.serviceUrl,
      o.apiKey,
      {
        hookUrl: `http://127.0.0.1:${port}/hook`,
        transcriptUrl: `http://127.0.0.1:${port}/transcript`,
        origin: url,
        guideUrl: `${url}/guide`,
        analystUrl: `http://127.0.0.1:${port}/analyst/v1`,
      },
      o.statePath,
      o.answeredBy,
    );
  } catch (err) {
    await close();
    throw err;
  }
  return { url, deployment, close };
}
