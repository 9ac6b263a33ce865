import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import { clientAddress } from '../http/client-address.js';
import { jsonHygieneProblem } from '../shared/json-hygiene.js';
import { PerKeyCap } from '../shared/per-key-cap.js';
import type { StoreHealth } from '../store/store-health.js';
import type { Concierge } from './concierge.js';
import type { StoredFrame } from './conversation.repository.js';
import type { ConversationBus } from './conversation-bus.js';
import type { DeploymentContext } from './deployment-context.js';
import { type UserClaims, verifyUserToken } from './user-token.js';

const PATH = /^\/embed\/concierge\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/ws$/;
export const MAX_FRAME_BYTES = 16 * 1024;
/** A peer whose unsent buffer passes this is not reading: it is dropped and resumes from its last_seq. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * The server's own replay hands the socket this much at most before waiting for it to drain,
 * so a long history never trips the slow-peer rule above for a reader that keeps up.
 */
const REPLAY_WINDOW_BYTES = 256 * 1024;
/** Stored events read per page of a replay. */
const REPLAY_PAGE = 500;
/** A replay that cannot hand over its next frame for this long is talking to a peer that does not read. */
const DRAIN_TIMEOUT_MS = 30_000;
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
  /** The store cannot be reached right now: the widget reconnects and resumes (RFC 6455 "try again later"). */
  tryAgainLater: 1013,
  internalError: 1011,
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
  z.strictObject({ type: z.literal('ping') }),
]);
type ClientMessage = z.infer<typeof clientMessage>;

export interface SessionServerOptions {
  concierge: Concierge;
  bus: ConversationBus;
  health: StoreHealth;
  /** New conversations one `sub` may start on a deployment per 10 minutes. */
  newConversationsPerSub: number;
  /** Sockets one client address may hold open before `hello`. */
  preHelloSocketsPerAddress: number;
  /** Proxy hops whose X-Forwarded-For is believed (see {@link clientAddress}). */
  trustProxyHops: number;
  helloTimeoutMs?: number;
  pingIntervalMs?: number;
  drainTimeoutMs?: number;
  maxSocketsPerConversation?: number;
}

/** The widget's WebSocket endpoint: upgrade checks here, one {@link Session} per socket. */
export class SessionServer {
  readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  readonly sessions = new Set<Session>();
  readonly byConversation = new Map<string, Set<Session>>();
  private readonly heartbeat: NodeJS.Timeout;
  /**
   * Sockets that have not said hello cost memory and a file each and prove nothing: one client
   * address may hold only so many, counted from the upgrade until hello succeeds or the socket ends.
   */
  private readonly preHello: PerKeyCap;

  constructor(readonly o: SessionServerOptions) {
    this.preHello = new PerKeyCap(o.preHelloSocketsPerAddress);
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
    const release = this.preHello.take(clientAddress(req, this.o.trustProxyHops));
    if (!release) return refuseUpgrade(socket, 429, 'Too Many Requests', 'Retry-After: 10\r\n');
    socket.once('close', release);
    this.upgrade(req, socket, head, match[1]!, release).catch((err) => {
      if (this.o.health.failed(err, 'websocket upgrade')) refuseUpgrade(socket, 503, 'Service Unavailable', 'Retry-After: 1\r\n');
      else refuseUpgrade(socket, 500, 'Internal Server Error');
    });
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, deploymentId: string, helloSaid: () => void): Promise<void> {
    const dep = await this.o.concierge.deployment(deploymentId);
    if (!dep) return refuseUpgrade(socket, 404, 'Not Found');
    const origin = req.headers.origin;
    if (dep.allowedOrigins.length && (!origin || !dep.allowedOrigins.includes(origin))) return refuseUpgrade(socket, 403, 'Forbidden');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      if (dep.status !== 'active') {
        ws.close(Close.ended, 'deployment inactive');
        return;
      }
      const session = new Session(this, ws, dep, helloSaid);
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

function refuseUpgrade(socket: Duplex, status: number, reason: string, headers = ''): void {
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${reason}\r\n${headers}Connection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

class Session {
  conversationId: string | undefined;
  private sub: string | undefined;
  /** The current token's `exp`, in seconds. */
  private expiresAt = 0;
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
    /** Frees this socket's place among its address's sockets without hello. */
    private readonly helloSaid: () => void,
  ) {
    this.helloTimer = setTimeout(() => this.close(Close.noHello, 'no hello in time'), server.o.helloTimeoutMs ?? 10_000);
    ws.on('message', (data, isBinary) => {
      const parsed = parseClientMessage(data, isBinary);
      // A ping is the widget asking whether this connection still works: it is answered at once,
      // not after the turns queued before it.
      if (parsed.message?.type === 'ping' && this.conversationId) return this.send({ type: 'pong' });
      this.queue = this.queue.then(() => this.onMessage(parsed)).catch((err) => this.failed(err, 'session message'));
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

  private async onMessage({ message, problem }: ParsedMessage): Promise<void> {
    if (this.closed) return;
    if (!this.conversationId) {
      if (message?.type !== 'hello') return this.close(Close.protocol, 'the first message must be a valid hello');
      return this.hello(message);
    }
    if (!message || message.type === 'hello') return this.sendError('invalid_message', problem ?? 'Expected user_turn, refresh_token, end or ping as a JSON text frame');
    if (message.type === 'ping') return this.send({ type: 'pong' });
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
      const started = await concierge.startConversation(this.dep, claims, this.server.o.newConversationsPerSub);
      if (started.outcome === 'refused') {
        this.sendError('rate_limited', started.message);
        return this.close(Close.tooMany, 'too many new conversations for this user');
      }
      conversation = started.conversation;
    }
    if (this.closed) return;
    if (!this.server.join(conversation.id, this)) return this.close(Close.tooMany, 'too many connections to this conversation');
    this.conversationId = conversation.id;
    this.sub = claims.sub;
    this.helloSaid();
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

  /**
   * Verifies a token and moves the expiry timer to it. A refresh (`current` given) must be for the
   * same user and expire later than the token it replaces.
   */
  private async verify(tokenText: string, current?: { sub: string; exp: number }): Promise<UserClaims | undefined> {
    // Remembered for a second at most: a token signed after a rotation verifies.
    this.dep = (await this.server.o.concierge.deployment(this.dep.id)) ?? this.dep;
    const check = await verifyUserToken(tokenText, this.dep.id, this.dep.secrets);
    if (!check.ok) {
      if (check.code === 'token_expired') this.sendError('token_expired', check.message);
      this.close(check.close, check.message);
      return undefined;
    }
    if (current && check.claims.sub !== current.sub) {
      this.close(Close.forbidden, 'the new token is for another user');
      return undefined;
    }
    if (current && check.claims.exp <= current.exp) {
      this.sendError('invalid_message', 'A refreshed token must expire later than the current one');
      return undefined;
    }
    this.expiresAt = check.claims.exp;
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
    await this.verify(tokenText, { sub: this.sub!, exp: this.expiresAt });
  }

  /** Frames just committed on this node go straight out when they follow what was sent; else the store is read. */
  private deliver(frames: readonly StoredFrame[] | undefined): void {
    if (!frames?.length || this.flushing || frames[0]!.seq !== this.sentSeq + 1) {
      void this.flush();
      return;
    }
    for (const frame of frames) if (!this.sendFrame(frame)) return;
    // A peer that stops reading is dropped; it resumes from its last_seq.
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) this.ws.terminate();
  }

  /**
   * Sends every stored event past what this socket has sent, one pass at a time, paced by the
   * socket's drain: past {@link REPLAY_WINDOW_BYTES} unsent, it waits until that much is handed to
   * the network, so a reader that keeps up gets any length of history on one connection.
   * Never rejects: a store failure closes the socket (the widget resumes from its last_seq).
   */
  private async flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    try {
      do {
        this.flushAgain = false;
        const frames = await this.server.o.concierge.framesAfter(this.conversationId!, this.sentSeq, REPLAY_PAGE);
        for (const frame of frames) {
          const paced = this.ws.bufferedAmount + frame.frame.length > REPLAY_WINDOW_BYTES;
          if (!(paced ? await this.sendDrained(frame) : this.sendFrame(frame))) return;
        }
        if (frames.length === REPLAY_PAGE) this.flushAgain = true;
      } while (this.flushAgain && !this.closed);
    } catch (err) {
      this.failed(err, 'replaying stored events');
    } finally {
      this.flushing = false;
    }
  }

  /** Sends a frame and resolves once the socket has handed it to the network; a peer that takes nothing for too long is dropped. */
  private sendDrained(frame: StoredFrame): Promise<boolean> {
    return new Promise((resolve) => {
      const stalled = setTimeout(() => {
        this.ws.terminate();
        resolve(false);
      }, this.server.o.drainTimeoutMs ?? DRAIN_TIMEOUT_MS);
      const sent = this.sendFrame(frame, () => {
        clearTimeout(stalled);
        resolve(!this.closed);
      });
      if (!sent) {
        clearTimeout(stalled);
        resolve(false);
      }
    });
  }

  /** Sends one stored frame if this socket has not sent it yet; false once the socket is closed. */
  private sendFrame({ seq, type, frame }: StoredFrame, onSent?: () => void): boolean {
    if (this.closed) return false;
    if (seq <= this.sentSeq) {
      onSent?.();
      return true;
    }
    this.ws.send(frame, onSent);
    this.sentSeq = seq;
    if (type !== 'conversation_ended') return true;
    this.close(Close.ended, 'conversation ended');
    return false;
  }

  /** A failure while serving this socket: a store outage asks the widget to come back shortly; anything else is a bug. */
  private failed(err: unknown, what: string): void {
    if (this.server.o.health.failed(err, what)) this.close(Close.tryAgainLater, 'the store is unavailable; reconnect shortly');
    else this.close(Close.internalError, 'internal error');
  }

  private send(frame: object): void {
    if (!this.closed) this.ws.send(JSON.stringify(frame));
  }

  private sendError(code: string, message: string): void {
    this.send({ type: 'error', code, message });
  }

  private close(code: number, reason: string): void {
    if (this.closed) return;
    // A close reason is at most 123 bytes; it may quote input, so it is cut to ASCII first.
    this.ws.close(code, reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 123));
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

/** A client frame, or why it is not one (JSON text, the contract's text hygiene, then the message schema). */
interface ParsedMessage {
  message?: ClientMessage;
  problem?: string;
}

function parseClientMessage(data: RawData, isBinary: boolean): ParsedMessage {
  if (isBinary) return { problem: 'Frames must be JSON text' };
  let value: unknown;
  try {
    value = JSON.parse(data.toString());
  } catch {
    return { problem: 'The frame is not valid JSON' };
  }
  const unclean = jsonHygieneProblem(value, 'message');
  if (unclean) return { problem: `${unclean.path} ${unclean.message}` };
  const parsed = clientMessage.safeParse(value);
  return parsed.success ? { message: parsed.data } : { problem: `Invalid message: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'message'} ${i.message}`).join('; ')}` };
}
