import type { RawData } from 'ws';
import { conversationValues, withGreetingFilled } from '../conversations/conversation-variables.js';
import { Close, CloseReason, type CloseCode } from '#protocol/close-codes';
import type { ClientMessage, ServerFrame } from '#protocol/frames';
import { AppError } from '../../errors.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import type { StoredFrame } from '../events/event.repository.js';
import type { TurnInput } from '../turns/turn.service.js';
import { isWidgetErrorCode, type ParsedMessage, parseClientMessage } from './client-message.js';
import { type CursorOwner, EventCursor } from './event-cursor.js';
import type { SessionLine } from './session-line.js';
import type { SessionServices, SessionSettings } from './session-services.js';
import { PageMessages } from './page-messages.js';
import { SocketInbox } from './socket-inbox.js';
import { SocketVoice } from './socket-voice.js';
import type { SessionSocket } from './session-socket.js';
import { TokenExpiry } from './token-expiry.js';
import { type UserClaims, verifyUserToken } from './user-token.js';

/** Where a session takes its place among its conversation's sockets: its gateway. */
export interface SessionRegistry {
  /** Takes a place among the conversation's sockets; false when it has no more. */
  join(conversationId: string, session: Session): boolean;
  leave(session: Session): void;
}

/** What every session of a gateway shares. */
export interface SessionShared {
  services: SessionServices;
  settings: SessionSettings;
  registry: SessionRegistry;
}

/**
 * One widget socket speaking the protocol of README, Concierge sessions: `hello` (token, start or resume), then turns, token
 * refreshes, `end` and `ping`, while the conversation's events flow out through its
 * {@link EventCursor}. Errors are rendered here only: {@link tell} answers with an `error` frame and
 * keeps the socket; {@link end} also closes it with the error's close code.
 */
export class Session implements CursorOwner, SessionLine {
  conversationId: string | undefined;
  sub: string | undefined;
  private closed = false;
  /** Whether the peer answered the last ping. */
  private alive = true;
  /** Stops this socket following its conversation. */
  private unfollow: (() => void) | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  /** The socket lives as long as its token. */
  private readonly expiry = new TokenExpiry(() =>
    this.end(new AppError('token_expired', 'The token expired; reconnect with a fresh one')),
  );
  /** Messages run one at a time, in order, so a turn sent right after hello finds its conversation. */
  private readonly inbox: SocketInbox;
  /** What the page and the visitor tell besides turns: page events, ratings, asking for a person. */
  private readonly page: PageMessages;
  /** The visitor's voice in and the agent's voice out. */
  private readonly voice: SocketVoice;

  private readonly services: SessionServices;
  private readonly settings: SessionSettings;
  private readonly registry: SessionRegistry;

  constructor(
    private readonly socket: SessionSocket,
    shared: SessionShared,
    public dep: DeploymentContext,
    /** Frees this socket's place among its address's sockets without hello. */
    private readonly helloSaid: () => void,
  ) {
    ({ services: this.services, settings: this.settings, registry: this.registry } = shared);
    this.inbox = new SocketInbox(socket, (err) => this.failed(err));
    this.voice = new SocketVoice(this, socket, this.services, {
      firstAudio: (turnId, ms) =>
        this.inbox.enqueue(() => this.services.turns.firstAudio(this.dep, this.conversationId!, turnId, ms)),
      reengage: (text) =>
        this.inbox.enqueue(() => this.services.conversations.reengage(this.dep, this.conversationId!, text)),
    });
    this.page = new PageMessages(this, this.services);
    this.helloTimer = setTimeout(
      () => this.end(new AppError('hello_timeout', 'no hello in time')),
      this.settings.helloTimeoutMs,
    );
  }

  receive(data: RawData, isBinary: boolean): void {
    if (this.closed) return;
    // Audio comes after ready, inside an utterance: a binary frame before it is not buffered behind hello.
    if (isBinary && !this.conversationId)
      return this.end(
        new AppError('protocol_error', 'Binary frames belong between audio_start and audio_end, after ready'),
      );
    if (!this.inbox.received(data, () => this.onMessage(parseClientMessage(data, isBinary))))
      return this.end(
        new AppError(
          'too_much_queued',
          'More was sent than the service holds unhandled for one socket; reconnect and resume',
        ),
      );
  }

  isClosed(): boolean {
    return this.closed;
  }

  sent(frame: StoredFrame): void {
    this.voice.sent(frame);
  }

  conversationEnded(): void {
    this.close(Close.ended, CloseReason.ended);
  }

  conversationGone(): void {
    this.end(new AppError('conversation_ended', 'The conversation was deleted'));
  }

  /** The gateway's heartbeat: a peer that did not answer the last ping is gone. */
  checkAlive(): void {
    if (!this.alive) return this.socket.terminate();
    this.alive = false;
    this.socket.ping();
  }

  answered(): void {
    this.alive = true;
  }

  /** The socket is gone, however it went: nothing of its audio is kept. */
  dispose(): void {
    this.closed = true;
    this.voice.dispose();
    clearTimeout(this.helloTimer);
    this.expiry.stop();
    this.unfollow?.();
    this.registry.leave(this);
  }

  /** A close that is not an error: the server going away, the conversation over. */
  close(code: CloseCode, reason: string): void {
    if (this.closed) return;
    // A close reason is at most 123 bytes; it may quote input, so it is cut to ASCII first.
    this.socket.close(code, reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 123));
    // The closing handshake needs the peer's close frame read: whatever comes before it is ignored.
    this.socket.resume();
    this.dispose();
  }

  private async onMessage({ message, problem, audio }: ParsedMessage): Promise<void> {
    if (this.closed) return;
    if (!this.conversationId) {
      if (message?.type !== 'hello')
        return this.end(new AppError('protocol_error', 'the first message must be a valid hello'));
      return this.hello(message);
    }
    if (audio) return this.voice.audio(audio);
    if (!message || message.type === 'hello')
      return this.tell(
        new AppError(
          'invalid_message',
          problem ??
            'Expected user_turn, feedback, playback, ask_for_person, page_event, context, proactive, refresh_token, end, ping, audio_start or recognition_fallback as a JSON text frame',
        ),
      );
    if (message.type === 'ping') return this.send({ type: 'pong' });
    if (message.type === 'user_turn') return this.userTurn(message);
    if (message.type === 'recognition_fallback') return this.voice.fallBack();
    if (message.type === 'audio_start' || message.type === 'audio_end' || message.type === 'audio_cancel')
      return this.voice.message(message);
    if (message.type === 'playback') return this.playback(message);
    if (message.type === 'refresh_token') return this.refresh(message.token);
    if (message.type === 'ask_for_person') return this.page.askForPerson();
    if (message.type === 'page_event' || message.type === 'context' || message.type === 'proactive')
      return this.page.fromPage(message);
    if (message.type === 'feedback') return this.page.rate(message);
    if (!(await this.services.conversations.end(this.dep, this.conversationId, 'user_ended'))) this.conversationGone();
  }

  private async hello(message: Extract<ClientMessage, { type: 'hello' }>): Promise<void> {
    clearTimeout(this.helloTimer);
    const claims = await this.verify(message.token);
    this.expiry.set(claims.exp);
    let conversation: ConversationRow;
    let sentSeq = 0;
    if (message.conversation_id) {
      conversation = await this.services.conversations.resume(this.dep, message.conversation_id, claims.sub);
      sentSeq = Math.min(message.last_seq ?? 0, conversation.last_seq);
    } else {
      conversation = await this.services.conversations.start(
        this.dep,
        claims,
        this.settings.newConversationsPerSub,
        message.language,
      );
    }
    // The agent of the conversation's version: a resumed one keeps its own, a new one may be split to another.
    const known = await this.services.conversations.agentOf(this.dep, conversation);
    // Its greeting says what the conversation's variables hold (README, Variables and guardrails).
    const language = message.language ?? known.language;
    const agent = withGreetingFilled(known, conversationValues({ conversation, language, now: new Date() }));
    if (this.closed) return;
    if (!this.registry.join(conversation.id, this))
      throw new AppError('too_many_connections', 'too many connections to this conversation');
    this.conversationId = conversation.id;
    this.sub = claims.sub;
    const speech = this.voice.joined({
      browserRecognition: message.browser_recognition ?? true,
      language,
    });
    this.helloSaid();
    this.send({
      type: 'ready',
      conversation_id: conversation.id,
      resumed: Boolean(message.conversation_id),
      last_seq: conversation.last_seq,
      token_expires_at: new Date(claims.exp * 1000).toISOString(),
      agent,
      widget: this.dep.widget.theme,
      speech,
      ...(this.dep.widget.proactive.length ? { proactive: this.dep.widget.proactive } : {}),
    });
    const cursor = new EventCursor(
      { socket: this.socket, source: this.services.history, owner: this, health: this.services.health },
      { conversationId: conversation.id, sentSeq },
      { drainTimeoutMs: this.settings.drainTimeoutMs },
    );
    const unsubscribe = this.services.bus.subscribe(conversation.id, (frames) => cursor.deliver(frames));
    this.unfollow = () => {
      unsubscribe();
      cursor.stop();
    };
    await cursor.flush();
  }

  /** The claims of a token for this deployment, read afresh (a token signed after a rotation verifies); throws its refusal. */
  private async verify(tokenText: string): Promise<UserClaims> {
    this.dep = (await this.services.deployments.get(this.dep.id)) ?? this.dep;
    const check = await verifyUserToken(tokenText, this.dep.id, this.dep.signing.secrets);
    if (!check.ok) {
      this.services.diagnostics.refused(this.dep.id, 'token_invalid', check.cause);
      throw check.error;
    }
    return check.claims;
  }

  /** How far the visitor listened to a reply: what they heard is kept, an interruption told to the transcript hook. */
  private async playback(message: Extract<ClientMessage, { type: 'playback' }>): Promise<void> {
    const heard = this.voice.playback(message);
    if (heard) await this.services.turns.heard(this.dep, this.conversationId!, message.turn_id, heard);
  }

  turn(turn: TurnInput): void {
    this.inbox.enqueue(() => this.userTurn(turn));
  }

  private async userTurn(message: TurnInput): Promise<void> {
    this.voice.asked(message.client_turn_id, message.mode);
    const result = await this.services.turns.submit(this.dep, this.conversationId!, message);
    if (result.outcome === 'refused') this.tell(result.error);
    if (result.outcome === 'gone') this.conversationGone();
  }

  /** A new token for the same user that expires later moves the expiry; an earlier or equal one is refused. */
  private async refresh(tokenText: string): Promise<void> {
    const claims = await this.verify(tokenText);
    if (claims.sub !== this.sub) throw new AppError('forbidden', 'the new token is for another user');
    if (claims.exp <= this.expiry.exp)
      return this.tell(new AppError('invalid_message', 'A refreshed token must expire later than the current one'));
    this.expiry.set(claims.exp);
  }

  /** Answers with an `error` frame; the socket stays open. */
  tell(err: AppError): void {
    if (isWidgetErrorCode(err.code)) this.send({ type: 'error', code: err.code, message: err.message });
  }

  /** Tells the widget (for the codes it knows) and closes with the error's close code. */
  end(err: AppError): void {
    this.tell(err);
    this.close(err.close, err.message);
  }

  /** A failure while serving this socket: a refusal ends it with its own code, a store outage asks the widget to come back shortly, anything else is a bug. */
  failed(err: unknown): void {
    if (err instanceof AppError) return this.end(err);
    if (this.services.health.failed(err, 'session'))
      return this.end(new AppError('unavailable', 'the store is unavailable; reconnect shortly'));
    this.end(new AppError('internal_error', 'internal error'));
  }

  send(frame: ServerFrame): void {
    if (!this.closed) this.socket.send(JSON.stringify(frame));
  }
}
