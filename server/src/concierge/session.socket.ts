import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import type { Concierge } from './concierge.js';
import type { StoredFrame } from './conversation.repository.js';
import type { ConversationBus } from './conversation-bus.js';
import type { DeploymentContext } from './deployment-context.js';
import { type UserClaims, verifyUserToken } from './user-token.js';

const PATH = /^\/embed\/concierge\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/ws$/;
export const MAX_FRAME_BYTES = 16 * 1024;
const MAX_BUFFERED_BYTES = 1024 * 1024;
const TOKEN_TOLERANCE_MS = 30_000;

export const Close = {
  protocol: 4400,
  badToken: 4401,
  forbidden: 4403,
  unknownConversation: 4404,
  noHello: 4408,
  ended: 4410,
  tooMany: 4429,
  goingAway: 1001,
} as const;

const token = z.string().min(1).max(8192);
const clientMessage = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('hello'), token, conversation_id: z.uuid().optional(), last_seq: z.number().int().min(0).optional() }),
  z.strictObject({
    type: z.literal('user_turn'),
    client_turn_id: z.string().min(1).max(64),
    text: z.string().min(1).max(4000),
    mode: z.enum(['text', 'voice']),
  }),
  z.strictObject({ type: z.literal('refresh_token'), token }),
  z.strictObject({ type: z.literal('end') }),
]);
type ClientMessage = z.infer<typeof clientMessage>;

export interface SessionServerOptions {
  concierge: Concierge;
  bus: ConversationBus;
  logger: Logger;
  helloTimeoutMs?: number;
  pingIntervalMs?: number;
  maxSocketsPerConversation?: number;
}

/** The widget's WebSocket endpoint: upgrade checks here, one {@link Session} per socket. */
export class SessionServer {
  readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  readonly sessions = new Set<Session>();
  readonly byConversation = new Map<string, Set<Session>>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(readonly o: SessionServerOptions) {
    this.heartbeat = setInterval(() => {
      for (const session of this.sessions) session.checkAlive();
    }, o.pingIntervalMs ?? 30_000);
    this.heartbeat.unref();
  }

  /** The server's only upgrade handler: any other path is refused with 404. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const match = PATH.exec((req.url ?? '').split('?', 1)[0]!);
    if (!match) return refuseUpgrade(socket, 404, 'Not Found');
    this.upgrade(req, socket, head, match[1]!).catch((err) => {
      this.o.logger.error({ err }, 'websocket upgrade failed');
      refuseUpgrade(socket, 500, 'Internal Server Error');
    });
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, deploymentId: string): Promise<void> {
    const dep = await this.o.concierge.deployment(deploymentId);
    if (!dep) return refuseUpgrade(socket, 404, 'Not Found');
    const origin = req.headers.origin;
    if (dep.allowedOrigins.length && (!origin || !dep.allowedOrigins.includes(origin))) return refuseUpgrade(socket, 403, 'Forbidden');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      if (dep.status !== 'active') {
        ws.close(Close.ended, 'deployment inactive');
        return;
      }
      const session = new Session(this, ws, dep);
      this.sessions.add(session);
    });
  }

  join(conversationId: string, session: Session): boolean {
    let set = this.byConversation.get(conversationId);
    if (!set) this.byConversation.set(conversationId, (set = new Set()));
    if (set.size >= (this.o.maxSocketsPerConversation ?? 5)) return false;
    set.add(session);
    return true;
  }

  leave(session: Session): void {
    this.sessions.delete(session);
    const id = session.conversationId;
    if (!id) return;
    const set = this.byConversation.get(id);
    set?.delete(session);
    if (set && !set.size) this.byConversation.delete(id);
  }

  /** Shutdown: every widget is told to reconnect elsewhere (1001). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const session of this.sessions) session.ws.close(Close.goingAway, 'server going away');
    this.wss.close();
  }
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

class Session {
  conversationId: string | undefined;
  private sub: string | undefined;
  private sentSeq = 0;
  private alive = true;
  private closed = false;
  private flushing = false;
  private flushAgain = false;
  private unsubscribe: (() => void) | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** Messages run one at a time, in order, so a turn sent right after hello finds its conversation. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly server: SessionServer,
    readonly ws: WebSocket,
    private dep: DeploymentContext,
  ) {
    this.helloTimer = setTimeout(() => this.close(Close.noHello, 'no hello in time'), server.o.helloTimeoutMs ?? 10_000);
    ws.on('message', (data, isBinary) => {
      this.queue = this.queue.then(() => this.onMessage(data, isBinary)).catch((err) => {
        server.o.logger.error({ err }, 'session message failed');
        this.close(1011, 'internal error');
      });
    });
    ws.on('pong', () => {
      this.alive = true;
    });
    ws.on('close', () => this.dispose());
    ws.on('error', () => this.dispose());
  }

  checkAlive(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  private async onMessage(data: RawData, isBinary: boolean): Promise<void> {
    if (this.closed) return;
    let message: ClientMessage | undefined;
    if (!isBinary) {
      try {
        const parsed = clientMessage.safeParse(JSON.parse(data.toString()));
        if (parsed.success) message = parsed.data;
      } catch {
        // not JSON: handled below like any other invalid message
      }
    }
    if (!this.conversationId) {
      if (message?.type !== 'hello') return this.close(Close.protocol, 'the first message must be a valid hello');
      return this.hello(message);
    }
    if (!message || message.type === 'hello') return this.sendError('invalid_message', 'Expected user_turn, refresh_token or end as a JSON text frame');
    if (message.type === 'user_turn') return this.userTurn(message);
    if (message.type === 'refresh_token') return this.refresh(message.token);
    return this.server.o.concierge.endConversation(this.dep, this.conversationId, 'user_ended');
  }

  private async hello(message: Extract<ClientMessage, { type: 'hello' }>): Promise<void> {
    clearTimeout(this.helloTimer);
    const concierge = this.server.o.concierge;
    const claims = await this.verify(message.token);
    if (!claims) return;
    let conversation;
    if (message.conversation_id) {
      conversation = await concierge.conversation(message.conversation_id);
      if (!conversation || conversation.deployment_id !== this.dep.id) return this.close(Close.unknownConversation, 'unknown conversation');
      if (conversation.user_sub !== claims.sub) return this.close(Close.forbidden, "another user's conversation");
      this.sentSeq = Math.min(message.last_seq ?? 0, conversation.last_seq);
    } else {
      conversation = await concierge.startConversation(this.dep, claims);
    }
    if (this.closed) return;
    if (!this.server.join(conversation.id, this)) return this.close(Close.tooMany, 'too many connections to this conversation');
    this.conversationId = conversation.id;
    this.sub = claims.sub;
    this.send({
      type: 'ready',
      conversation_id: conversation.id,
      resumed: Boolean(message.conversation_id),
      last_seq: conversation.last_seq,
      token_expires_at: new Date(claims.exp * 1000).toISOString(),
      agent: this.dep.agent,
      widget: this.dep.widget,
    });
    this.unsubscribe = this.server.o.bus.subscribe(conversation.id, (frames) => this.deliver(frames));
    await this.flush();
  }

  private async verify(tokenText: string): Promise<UserClaims | undefined> {
    // Remembered for a second at most: a token signed after a rotation verifies.
    this.dep = (await this.server.o.concierge.deployment(this.dep.id)) ?? this.dep;
    const check = await verifyUserToken(tokenText, this.dep.id, this.dep.secrets);
    if (!check.ok) {
      if (check.code === 'token_expired') this.sendError('token_expired', check.message);
      this.close(check.close, check.message);
      return undefined;
    }
    clearTimeout(this.expiryTimer);
    const msLeft = check.claims.exp * 1000 + TOKEN_TOLERANCE_MS - Date.now();
    this.expiryTimer = setTimeout(() => {
      this.sendError('token_expired', 'The token expired; reconnect with a fresh one');
      this.close(Close.badToken, 'token expired');
    }, Math.min(Math.max(msLeft, 0), 2 ** 31 - 1));
    return check.claims;
  }

  private async userTurn(message: Extract<ClientMessage, { type: 'user_turn' }>): Promise<void> {
    const dep = (await this.server.o.concierge.deployment(this.dep.id)) ?? this.dep;
    if (dep.status !== 'active') return this.close(Close.ended, 'deployment inactive');
    this.dep = dep;
    const result = await this.server.o.concierge.submitTurn(dep, this.conversationId!, message);
    if (result.outcome === 'refused') this.sendError(result.code, result.message);
  }

  private async refresh(tokenText: string): Promise<void> {
    const claims = await this.verify(tokenText);
    if (claims && claims.sub !== this.sub) this.close(Close.forbidden, 'the new token is for another user');
  }

  /** Frames just committed on this node go straight out when they follow what was sent; else the store is read. */
  private deliver(frames: readonly StoredFrame[] | undefined): void {
    if (frames?.length && !this.flushing && frames[0]!.seq === this.sentSeq + 1) this.sendFrames(frames);
    else void this.flush();
  }

  /** Sends every stored event past what this socket has sent; one pass at a time. */
  private async flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    try {
      do {
        this.flushAgain = false;
        const frames = await this.server.o.concierge.framesAfter(this.conversationId!, this.sentSeq);
        this.sendFrames(frames);
        if (frames.length === 500) this.flushAgain = true;
      } while (this.flushAgain && !this.closed);
    } finally {
      this.flushing = false;
    }
  }

  private sendFrames(frames: readonly StoredFrame[]): void {
    for (const { seq, type, frame } of frames) {
      if (this.closed || seq <= this.sentSeq) continue;
      this.ws.send(frame);
      this.sentSeq = seq;
      if (type === 'conversation_ended') return this.close(Close.ended, 'conversation ended');
    }
    // A peer that stops reading is dropped; it resumes from its last_seq.
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) this.ws.terminate();
  }

  private send(frame: object): void {
    if (!this.closed) this.ws.send(JSON.stringify(frame));
  }

  private sendError(code: string, message: string): void {
    this.send({ type: 'error', code, message });
  }

  private close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.close(code, reason.slice(0, 120));
    this.dispose();
  }

  private dispose(): void {
    this.closed = true;
    clearTimeout(this.helloTimer);
    clearTimeout(this.expiryTimer);
    this.unsubscribe?.();
    this.server.leave(this);
  }
}
