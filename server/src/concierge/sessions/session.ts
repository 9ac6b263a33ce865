import type { RawData } from 'ws';
import { AppError } from '../../errors.js';
import { WindowCounter } from '../../shared/window-counter.js';
import { jsonHygieneProblem } from '../../shared/json-hygiene.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import type { ConversationHandling } from '../conversations/handling.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { DeploymentContext, DeploymentDirectory } from '../deployment-context.js';
import type { ConversationBus } from '../events/conversation-bus.js';
import { Close, CloseReason, type CloseCode } from '#protocol/close-codes';
import {
  type ClientMessage,
  clientMessage,
  type RecognitionSite,
  type ServerFrame,
  type SynthesisSite,
  type WidgetErrorCode,
  widgetErrorCodes,
} from '#protocol/frames';
import type { TurnInput, TurnService } from '../turns/turn.service.js';
import type { PageService } from '../pages/page.service.js';
import { type CursorOwner, type CursorSource, EventCursor } from './event-cursor.js';
import type { SessionSocket } from './session-socket.js';
import { type UserClaims, verifyUserToken } from './user-token.js';
import type { InstallDiagnostics } from '../diagnostics/install-diagnostics.js';
import { recognitionFallback, recognitionSite, synthesisSite } from '../speech/speech-sites.js';
import type { SpeechRecognition } from '../speech/speech-recognition.js';
import type { SpeechSynthesis } from '../speech/speech-synthesis.js';
import type { SpeechRequest } from '../speech/synthesiser.js';
import { speechRequestFor } from '../speech/agent-voice.js';
import type { StoredFrame } from '../events/event.repository.js';
import { VoiceInput } from './voice-input.js';
import { VoiceOutput } from './voice-output.js';

const TOKEN_TOLERANCE_MS = 30_000;
/** Page events, context changes and greeting reports one socket may send a minute. */
export const PAGE_MESSAGES_PER_MINUTE = 60;
/**
 * What one socket may have sent that is not handled yet. Reading pauses while a message is being
 * handled (or `hello`'s replay is pending); what one network read already holds still arrives, so
 * a burst of small frames fits, and past either bound the socket is closed rather than the process
 * made to hold its flood.
 */
export const MAX_QUEUED_MESSAGES = 1_024;
export const MAX_QUEUED_BYTES = 1024 * 1024;

/** The services a session speaks for. */
export interface SessionServices {
  conversations: ConversationService;
  handling: ConversationHandling;
  turns: TurnService;
  /** What the visitor's page tells the agent, and the greeting rules that approached them (README, Greeting visitors first). */
  pages: Pick<PageService, 'event' | 'setContext' | 'approached'>;
  deployments: DeploymentDirectory;
  history: CursorSource;
  bus: ConversationBus;
  health: StoreHealth;
  diagnostics: InstallDiagnostics;
  speech: SpeechRecognition;
  synthesis: SpeechSynthesis;
}

/** How every session behaves. */
export interface SessionSettings {
  /** New conversations one `sub` may start on a deployment per 10 minutes. */
  newConversationsPerSub: number;
  helloTimeoutMs: number;
  /** How long a widget that reads nothing may hold back its conversation's events (see EventCursor). */
  drainTimeoutMs: number;
}

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
export class Session implements CursorOwner {
  conversationId: string | undefined;
  private sub: string | undefined;
  /** The current token's `exp`, in seconds. */
  private expiresAt = 0;
  private closed = false;
  /** Whether the peer answered the last ping. */
  private alive = true;
  /** Stops this socket following its conversation. */
  private unfollow: (() => void) | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** Messages run one at a time, in order, so a turn sent right after hello finds its conversation. */
  private queue: Promise<void> = Promise.resolve();
  /** Messages received and not yet handled, and their bytes. */
  private queued = { messages: 0, bytes: 0 };
  /** What `hello` said of the browser: whether it recognises speech itself. */
  private browserRecognition = true;
  /** The conversation's language, for an utterance that names none. */
  private language = 'en-US';
  /** The page's events, context and greeting reports this minute. */
  private readonly pageMessages = new WindowCounter(PAGE_MESSAGES_PER_MINUTE);
  /** The socket's voice coming in: utterances and their recognition. */
  private readonly voice: VoiceInput;
  /** The agent's voice going out to this socket, and what its visitor heard of it. */
  private readonly voiceOut: VoiceOutput;

  private readonly services: SessionServices;
  private readonly settings: SessionSettings;
  private readonly registry: SessionRegistry;

  constructor(
    private readonly socket: SessionSocket,
    shared: SessionShared,
    private dep: DeploymentContext,
    /** Frees this socket's place among its address's sockets without hello. */
    private readonly helloSaid: () => void,
  ) {
    ({ services: this.services, settings: this.settings, registry: this.registry } = shared);
    this.voice = new VoiceInput(
      {
        speaker: () => ({
          deploymentId: this.dep.id,
          conversationId: this.conversationId!,
          sub: this.sub!,
          language: this.language,
          site: this.recognitionSite(),
        }),
        send: (frame) => this.send(frame),
        tell: (err) => this.tell(err),
        end: (err) => this.end(err),
        turn: (turn) => void this.enqueue(() => this.userTurn(turn)),
        failed: (err) => this.failed(err),
        isClosed: () => this.closed,
      },
      this.services.speech,
    );
    this.voiceOut = new VoiceOutput({
      socket: this.socket,
      synthesis: this.services.synthesis,
      site: () => this.synthesisSite(),
      request: (text, language) => this.speechRequest(text, language),
      isClosed: () => this.closed,
      sendFrame: (frame) => this.send(frame),
    });
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
    const bytes = byteLength(data);
    this.queued.messages++;
    this.queued.bytes += bytes;
    if (this.queued.messages > MAX_QUEUED_MESSAGES || this.queued.bytes > MAX_QUEUED_BYTES) {
      return this.end(
        new AppError(
          'too_much_queued',
          'More was sent than the service holds unhandled for one socket; reconnect and resume',
        ),
      );
    }
    this.socket.pause();
    const parsed = parseClientMessage(data, isBinary);
    void this.enqueue(() => this.onMessage(parsed)).finally(() => {
      this.queued.messages--;
      this.queued.bytes -= bytes;
      if (!this.queued.messages) this.socket.resume();
    });
  }

  /** Runs `work` after what is already queued; its failure is this socket's. */
  private enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((err) => this.failed(err));
    return this.queue;
  }

  isClosed(): boolean {
    return this.closed;
  }

  sent(frame: StoredFrame): void {
    this.voiceOut.sent(frame);
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
    this.voiceOut.dispose();
    clearTimeout(this.helloTimer);
    clearTimeout(this.expiryTimer);
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
    if (audio) return this.voice.frame(audio);
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
    if (message.type === 'recognition_fallback') return this.fallBackToServiceRecognition();
    if (message.type === 'audio_start') {
      this.voiceOut.asked(message.client_turn_id, 'voice');
      return this.voice.start(message);
    }
    if (message.type === 'playback') return this.playback(message);
    if (message.type === 'audio_end') return this.voice.end(message.client_turn_id);
    if (message.type === 'audio_cancel') return this.voice.cancel(message.client_turn_id);
    if (message.type === 'refresh_token') return this.refresh(message.token);
    if (message.type === 'ask_for_person') return this.askForPerson();
    if (message.type === 'page_event' || message.type === 'context' || message.type === 'proactive')
      return this.fromPage(message);
    if (message.type === 'feedback')
      return this.tellRefusal(() => this.services.turns.rate(this.dep, this.conversationId!, message.turn_id, message));
    if (!(await this.services.conversations.end(this.dep, this.conversationId, 'user_ended'))) this.conversationGone();
  }

  private async hello(message: Extract<ClientMessage, { type: 'hello' }>): Promise<void> {
    clearTimeout(this.helloTimer);
    const claims = await this.verify(message.token);
    this.expireAt(claims.exp);
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
    const agent = message.conversation_id
      ? await this.services.conversations.agentOf(this.dep, conversation)
      : this.dep.agent;
    if (this.closed) return;
    if (!this.registry.join(conversation.id, this))
      throw new AppError('too_many_connections', 'too many connections to this conversation');
    this.conversationId = conversation.id;
    this.sub = claims.sub;
    this.browserRecognition = message.browser_recognition ?? true;
    this.language = message.language ?? agent.language;
    this.helloSaid();
    this.send({
      type: 'ready',
      conversation_id: conversation.id,
      resumed: Boolean(message.conversation_id),
      last_seq: conversation.last_seq,
      token_expires_at: new Date(claims.exp * 1000).toISOString(),
      agent,
      widget: this.dep.widget,
      speech: {
        recognition: this.recognitionSite(),
        ...(this.dep.speechRecognition === 'off' ? { text_only: true } : {}),
        ...(this.recognitionFallback() ? { fallback: this.recognitionFallback() } : {}),
        synthesis: this.synthesisSite(),
      },
      ...(this.dep.proactive.length ? { proactive: this.dep.proactive } : {}),
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
    const check = await verifyUserToken(tokenText, this.dep.id, this.dep.secrets);
    if (!check.ok) {
      this.services.diagnostics.refused(this.dep.id, 'token_invalid', check.cause);
      throw check.error;
    }
    return check.claims;
  }

  /** The socket lives as long as its token (with the clock tolerance): then `token_expired` and 4401. */
  private expireAt(exp: number): void {
    this.expiresAt = exp;
    clearTimeout(this.expiryTimer);
    const msLeft = exp * 1000 + TOKEN_TOLERANCE_MS - Date.now();
    this.expiryTimer = setTimeout(
      () => this.end(new AppError('token_expired', 'The token expired; reconnect with a fresh one')),
      Math.min(Math.max(msLeft, 0), 2 ** 31 - 1),
    );
  }

  /** Where this widget's speech is recognised, under the deployment's settings as they are now. */
  private recognitionSite(): RecognitionSite {
    return recognitionSite(this.dep.speechRecognition, this.browserRecognition, this.services.speech.available);
  }

  private recognitionFallback(): 'service' | undefined {
    return recognitionFallback(this.dep.speechRecognition, this.browserRecognition, this.services.speech.available);
  }

  /** The browser's own recognition failed here (README, Voice in every browser): the service's hears this widget from now on. */
  private fallBackToServiceRecognition(): void {
    if (!this.recognitionFallback())
      return this.tell(
        new AppError('invalid_message', "This widget's speech has no fallback: ready.speech.fallback names none"),
      );
    this.browserRecognition = false;
  }

  /** Whose voice reads this widget's replies out, under the deployment's settings as they are now. */
  private synthesisSite(): SynthesisSite {
    return synthesisSite(this.dep.speechSynthesis, this.services.synthesis.engine !== undefined);
  }

  /** How the service's voice says a sentence in `language`: the agent's voice for it, its pace and pronunciations. */
  private speechRequest(text: string, language: string): SpeechRequest {
    return speechRequestFor(text, language, this.dep.agentSpeech, this.dep.agent.language);
  }

  /** How far the visitor listened to a reply: what they heard is kept, an interruption told to the transcript hook. */
  private async playback(message: Extract<ClientMessage, { type: 'playback' }>): Promise<void> {
    const heard = this.voiceOut.heard(message.turn_id, message.sentence, message.offset_ms, message.state);
    if (heard) await this.services.turns.heard(this.dep, this.conversationId!, message.turn_id, heard);
  }

  private async userTurn(message: TurnInput): Promise<void> {
    this.voiceOut.asked(message.client_turn_id, message.mode);
    const result = await this.services.turns.submit(this.dep, this.conversationId!, message);
    if (result.outcome === 'refused') this.tell(result.error);
    if (result.outcome === 'gone') this.conversationGone();
  }

  /** Runs `work`; its refusal is told on the open socket instead of ending it. */
  private async tellRefusal(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_message') throw err;
      this.tell(err);
    }
  }

  /**
   * What the page tells (README, Greeting visitors first): an event, its context, a greeting rule
   * that approached the visitor. At most {@link PAGE_MESSAGES_PER_MINUTE} a minute per socket: a
   * page that fires events in a loop is told `rate_limited`, and what it sent past that is dropped.
   */
  private async fromPage(message: Extract<ClientMessage, { type: 'page_event' | 'context' | 'proactive' }>) {
    if (this.pageMessages.refuse('page'))
      return this.tell(new AppError('rate_limited', `At most ${PAGE_MESSAGES_PER_MINUTE} page events a minute`));
    const { pages } = this.services;
    if (message.type === 'page_event')
      return pages.event(this.dep, this.conversationId!, message.name, message.data).catch((err: unknown) => {
        if (!(err instanceof AppError) || err.code !== 'rate_limited') throw err;
        this.tell(err);
      });
    if (message.type === 'context') return pages.setContext(this.dep, this.conversationId!, message.data);
    return pages.approached(this.dep, this.conversationId!, message.rule_id, message.event);
  }

  /** The visitor asks for a person; a conversation that ended meanwhile tells the widget so itself. */
  private async askForPerson(): Promise<void> {
    try {
      await this.services.handling.askForPerson(this.dep.customerId, this.conversationId!);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_state') throw err;
    }
  }

  /** A new token for the same user that expires later moves the expiry; an earlier or equal one is refused. */
  private async refresh(tokenText: string): Promise<void> {
    const claims = await this.verify(tokenText);
    if (claims.sub !== this.sub) throw new AppError('forbidden', 'the new token is for another user');
    if (claims.exp <= this.expiresAt)
      return this.tell(new AppError('invalid_message', 'A refreshed token must expire later than the current one'));
    this.expireAt(claims.exp);
  }

  /** Answers with an `error` frame; the socket stays open. */
  private tell(err: AppError): void {
    if (isWidgetErrorCode(err.code)) this.send({ type: 'error', code: err.code, message: err.message });
  }

  /** Tells the widget (for the codes it knows) and closes with the error's close code. */
  private end(err: AppError): void {
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

  private send(frame: ServerFrame): void {
    if (!this.closed) this.socket.send(JSON.stringify(frame));
  }
}

const byteLength = (data: RawData): number =>
  Array.isArray(data)
    ? data.reduce((sum, b) => sum + b.length, 0)
    : data instanceof ArrayBuffer
      ? data.byteLength
      : data.length;

const isWidgetErrorCode = (code: string): code is WidgetErrorCode =>
  (widgetErrorCodes as readonly string[]).includes(code);

interface ParsedMessage {
  message?: ClientMessage;
  problem?: string;
  /** A binary frame: audio of the utterance in progress. */
  audio?: Buffer;
}

/** A client frame, or why it is not one (JSON text, the text hygiene of README, The management API, then the message schema); binary frames are audio. */
function parseClientMessage(data: RawData, isBinary: boolean): ParsedMessage {
  if (isBinary)
    return { audio: Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data) };
  let value: unknown;
  try {
    value = JSON.parse(data.toString());
  } catch {
    return { problem: 'The frame is not valid JSON' };
  }
  const unclean = jsonHygieneProblem(value, 'message');
  if (unclean) return { problem: `${unclean.path} ${unclean.message}` };
  const parsed = clientMessage.safeParse(value);
  return parsed.success
    ? { message: parsed.data }
    : {
        problem: `Invalid message: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'message'} ${i.message}`).join('; ')}`,
      };
}
