import { sentencesOf, unspoken } from '../speech/sentences';
import {
  Close,
  type ClientFrame,
  type FeedbackRating,
  type ReplyAction,
  type ServerFrame,
  type TurnMode,
} from './protocol';
import { applyEvent, emptyView, type Line, replyKey, type Status, type View } from './transcript';

/** An action the host page runs (README, Actions on a reply). */
export type ClientAction = Extract<ReplyAction, { type: 'client' }>;

/** The part of a browser WebSocket the session uses: the browser's own, or a fake in tests. */
export interface Socket {
  readonly readyState: number;
  onopen: ((event: Event) => void) | null;
  onmessage: ((message: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  send(data: string | ArrayBuffer): void;
  close(code?: number): void;
}

/** What the browser says about the network and the page: hints the session acts on at once. */
export interface Surroundings {
  online(): boolean;
  /** Calls back on the browser's `online` and `offline` events and when the page becomes visible. */
  watch(on: { online(): void; offline(): void; visible(): void }): () => void;
}

export interface SessionOptions {
  baseUrl: string;
  deploymentId: string;
  getToken(): Promise<string>;
  /** Where the conversation is remembered across reloads (sessionStorage). */
  storage: Storage | undefined;
  openSocket?: (url: string) => Socket;
  surroundings?: Surroundings;
  /** Each sentence to read out, once, as soon as it is complete: replies to this tab's voice turns. */
  speak?(sentence: string): void;
  /** Whether this browser recognises speech itself: `hello` says so, and `ready.speech` answers where speech is recognised. */
  browserRecognition?: boolean;
  /** Each client action to run on this page: at most once per reply, never on replay or in another tab (`turnId`: none for a person's message). */
  act?(action: ClientAction, turnId: string | undefined): void;
}

export type SessionEvent =
  | { type: 'ready'; conversationId: string }
  | { type: 'turn'; clientTurnId: string; text: string; mode: TurnMode }
  /** The service has an utterance of this tab whole and is recognising it. */
  | { type: 'transcribing'; clientTurnId: string }
  /** `speak`: this page asked the question by voice, so this page reads the answer out. */
  | {
      type: 'reply';
      turnId: string;
      text: string;
      actions: ReplyAction[];
      mode: TurnMode | undefined;
      replayed: boolean;
      speak: boolean;
    }
  /** `name`: the client action that failed (`action_failed`). */
  | { type: 'error'; code: string; message: string; name?: string }
  | { type: 'ended'; reason: string };

interface Remembered {
  conversation_id?: string;
  /** Turns sent but not yet confirmed by `turn_accepted`: resent with the same id after a reconnect. */
  unconfirmed: { client_turn_id: string; text: string; mode: TurnMode; language?: string }[];
  /**
   * Turns this tab asked, not yet answered, by `client_turn_id`: only this tab speaks their replies
   * and runs their actions. `spoken`: the sentences of the reply already read out, so a reload
   * mid-reply goes on from there instead of saying one twice.
   */
  asked: Record<string, { mode: TurnMode; spoken: number }>;
  /** How this tab's visitor last asked: a person's message, answering no turn, is read out when it was by voice. */
  mode?: TurnMode;
  /** The visitor's choice in the language menu: kept for a new conversation too. */
  language?: string;
}

const forgotten = (language?: string): Remembered => ({ unconfirmed: [], asked: {}, language });

const MAX_BACKOFF_MS = 30_000;
const REFRESH_BEFORE_MS = 60_000;
/** Silence on the socket before the widget asks with `ping` whether it still works. */
export const QUIET_MS = 10_000;
/** How long a `ping` waits for any frame before the socket is given up and replaced. */
export const PONG_WAIT_MS = 10_000;
const OPEN = 1;

const newId = (): string => crypto.randomUUID();

/**
 * The widget's end of the protocol in README, Concierge sessions: one socket at a time, reconnecting with exponential
 * backoff and jitter, resuming with `conversation_id` + `last_seq`, resending unconfirmed turns
 * under their first `client_turn_id` (the server makes no second turn of them), and refreshing
 * the token before it expires. A connection that dies without a close is found by its own
 * heartbeat, and the browser's word that the network is back skips whatever backoff is left.
 */
export class SessionClient {
  view: View = emptyView();
  #ws: Socket | undefined;
  #lastSeq = 0;
  /** Events up to this seq were stored before this page loaded: history, not news. */
  #historySeq: number | undefined;
  #attempts = 0;
  #stopped = false;
  #token: { value: string; expiresMs: number } | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #refreshTimer: ReturnType<typeof setTimeout> | undefined;
  #heartbeat: ReturnType<typeof setTimeout> | undefined;
  /** The socket's own state; the view says "offline" over it while the browser reports no network. */
  #link: Status = 'connecting';
  #offline = false;
  #unwatch: (() => void) | undefined;
  #memory: Remembered;
  /** Labelled client actions clicked on this page, as `turnId:index`: each runs once. */
  readonly #actionsRun = new Set<string>();
  readonly #listeners = new Set<(event: SessionEvent) => void>();
  readonly #viewers = new Set<(view: View) => void>();

  readonly #o: SessionOptions;

  constructor(o: SessionOptions) {
    this.#o = o;
    this.#memory = this.#recall();
    // A reload shows the history again: the page starts from nothing, so it asks for every event.
    for (const turn of this.#memory.unconfirmed) this.#addSending(turn);
  }

  onEvent(listener: (event: SessionEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  onView(viewer: (view: View) => void): () => void {
    this.#viewers.add(viewer);
    return () => this.#viewers.delete(viewer);
  }

  /** The visitor clicked a labelled client action of a line (a reply or a person's message): it runs once on this page. */
  runAction(lineKey: string, index: number): void {
    const line = this.view.lines.find((l) => l.key === lineKey);
    const action = line?.actions?.[index];
    const key = `${lineKey}:${index}`;
    if (action?.type !== 'client' || !action.label || this.#actionsRun.has(key)) return;
    this.#actionsRun.add(key);
    this.#setView({ ...this.view });
    this.#o.act?.(action, line!.turnId);
  }

  /** Whether a labelled client action was run on this page already. */
  actionRan(lineKey: string, index: number): boolean {
    return this.#actionsRun.has(`${lineKey}:${index}`);
  }

  start(): void {
    this.#stopped = false;
    const around = this.#o.surroundings;
    if (around && !this.#unwatch) {
      this.#offline = !around.online();
      this.#unwatch = around.watch({
        offline: () => {
          this.#offline = true;
          this.#setStatus(this.#link);
        },
        online: () => {
          this.#offline = false;
          this.#setStatus(this.#link);
          this.#reconnectNow();
        },
        visible: () => {
          if (!this.#ws) this.#reconnectNow();
        },
      });
    }
    if (!this.#ws) void this.#connect();
  }

  stop(): void {
    this.#stopped = true;
    this.#unwatch?.();
    this.#unwatch = undefined;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#refreshTimer);
    this.#drop(1000);
  }

  /** The visitor's choice in the language menu, if they made one. */
  get chosenLanguage(): string | undefined {
    return this.#memory.language;
  }

  /** The conversation's language: the visitor's choice, else the agent's (README, The widget in your visitors' languages). */
  get language(): string {
    return this.#memory.language ?? this.view.agent?.language ?? 'en-US';
  }

  /** The visitor chose a language: each turn from now on is sent in it. */
  chooseLanguage(language: string): void {
    this.#memory.language = language;
    this.#remember();
    this.#setView({ ...this.view });
  }

  /** Sends a visitor's turn; it shows at once and is resent until the server confirms it. */
  say(text: string, mode: TurnMode): void {
    const turn = { client_turn_id: newId(), text, mode, language: this.#memory.language };
    this.#memory.asked[turn.client_turn_id] = { mode, spoken: 0 };
    this.#memory.mode = mode;
    this.#memory.unconfirmed.push(turn);
    this.#remember();
    this.#addSending(turn);
    this.#emit({ type: 'turn', clientTurnId: turn.client_turn_id, text, mode });
    this.#sendTurn(turn);
  }

  /** Sends a frame of the service's speech recognition (README, Voice in every browser); false when the socket is not open. */
  sendSpeech(frame: ClientFrame | ArrayBuffer): boolean {
    if (this.#ws?.readyState !== OPEN) return false;
    this.#ws.send(frame instanceof ArrayBuffer ? frame : JSON.stringify(frame));
    return true;
  }

  /** A turn the service will make of this tab's voice: its reply is read out here, as a voice turn's is. */
  expectVoice(clientTurnId: string): void {
    this.#memory.asked[clientTurnId] = { mode: 'voice', spoken: 0 };
    this.#memory.mode = 'voice';
    this.#remember();
  }

  /** A failed turn asked again: a new turn with the same words. */
  retry(line: Line): void {
    this.#setView({ ...this.view, lines: this.view.lines.filter((l) => l !== line) });
    this.say(line.text, line.mode ?? 'text');
  }

  end(): void {
    this.#send({ type: 'end' });
  }

  /** The visitor rates a reply: shown at once, stored when the server's `feedback_recorded` comes back. */
  rate(turnId: string, rating: FeedbackRating, comment?: string): void {
    this.#setView(applyEvent(this.view, { type: 'feedback_recorded', seq: 0, turn_id: turnId, rating }));
    this.#send({ type: 'feedback', turn_id: turnId, rating, ...(comment ? { comment } : {}) });
  }

  /** After an ended conversation: forget it and start a new one. */
  restart(): void {
    this.stop();
    this.#memory = forgotten(this.#memory.language);
    this.#remember();
    this.#lastSeq = 0;
    this.#historySeq = undefined;
    this.#link = 'connecting';
    this.#setView(emptyView());
    this.start();
  }

  /** The browser says the network is back (or the page is seen again): no backoff left to wait out. */
  #reconnectNow(): void {
    if (this.#stopped || this.#link === 'ended') return;
    clearTimeout(this.#retryTimer);
    this.#drop();
    this.#attempts = 0;
    void this.#connect();
  }

  /** Lets go of the current socket; its late events are ignored. */
  #drop(code?: number): void {
    clearTimeout(this.#heartbeat);
    const ws = this.#ws;
    this.#ws = undefined;
    ws?.close(code);
  }

  /**
   * Browsers hide WebSocket pings, so the widget keeps its own watch: after {@link QUIET_MS} without
   * a frame it sends `ping`; if nothing at all comes back within {@link PONG_WAIT_MS} the socket is
   * dead (or never opened) and is replaced, resuming from `last_seq`.
   */
  #watch(ws: Socket): void {
    clearTimeout(this.#heartbeat);
    this.#heartbeat = setTimeout(() => {
      if (ws.readyState === OPEN) ws.send(JSON.stringify({ type: 'ping' } satisfies ClientFrame));
      this.#heartbeat = setTimeout(() => {
        if (this.#ws !== ws) return;
        this.#drop();
        this.#closed(0);
      }, PONG_WAIT_MS);
    }, QUIET_MS);
  }

  async #connect(): Promise<void> {
    if (this.#stopped || this.#ws) return;
    this.#setStatus(this.#link === 'connecting' ? 'connecting' : 'reconnecting');
    let token: string;
    try {
      token = await this.#freshToken();
    } catch (err) {
      this.#fail('token_unavailable', `Could not get a user token: ${String(err)}`);
      return this.#scheduleReconnect();
    }
    if (this.#stopped || this.#ws) return;
    const url = `${this.#o.baseUrl.replace(/^http/, 'ws')}/embed/concierge/${encodeURIComponent(this.#o.deploymentId)}/ws`;
    const ws = this.#o.openSocket ? this.#o.openSocket(url) : new WebSocket(url);
    this.#ws = ws;
    this.#watch(ws);
    ws.onopen = () => {
      const resume = this.#memory.conversation_id
        ? { conversation_id: this.#memory.conversation_id, last_seq: this.#lastSeq }
        : {};
      const browser =
        this.#o.browserRecognition === undefined ? {} : { browser_recognition: this.#o.browserRecognition };
      ws.send(JSON.stringify({ type: 'hello', token, ...resume, ...browser } satisfies ClientFrame));
    };
    ws.onmessage = (message) => {
      if (this.#ws !== ws) return;
      this.#watch(ws);
      this.#receive(JSON.parse(String(message.data)) as ServerFrame);
    };
    ws.onclose = (event) => {
      if (this.#ws !== ws) return;
      clearTimeout(this.#heartbeat);
      this.#ws = undefined;
      this.#closed(event.code);
    };
  }

  #receive(frame: ServerFrame): void {
    if (frame.type === 'ready') {
      this.#attempts = 0;
      this.#memory.conversation_id = frame.conversation_id;
      this.#remember();
      this.#historySeq ??= frame.resumed ? frame.last_seq : 0;
      this.#scheduleRefresh();
      this.#link = 'open';
      this.#setView({
        ...this.view,
        status: this.#statusOf('open'),
        agent: frame.agent,
        theme: frame.widget ?? {},
        recognition: frame.speech.recognition,
      });
      for (const turn of this.#memory.unconfirmed) this.#sendTurn(turn);
      this.#emit({ type: 'ready', conversationId: frame.conversation_id });
      return;
    }
    if (frame.type === 'pong') return;
    if (frame.type === 'transcribing') return this.#emit({ type: 'transcribing', clientTurnId: frame.client_turn_id });
    if (frame.type === 'error') {
      if (
        frame.code === 'rate_limited' ||
        frame.code === 'too_many_pending_turns' ||
        frame.code === 'conversation_ended'
      )
        this.#refuseNewestTurn(frame.code);
      this.#emit({ type: 'error', code: frame.code, message: frame.message });
      return;
    }
    if (frame.seq <= this.#lastSeq) return;
    // History replayed after a reload is shown, not spoken again.
    const replayed = frame.seq <= (this.#historySeq ?? 0);
    this.#lastSeq = frame.seq;
    if (frame.type === 'turn_accepted') {
      this.#memory.unconfirmed = this.#memory.unconfirmed.filter((t) => t.client_turn_id !== frame.client_turn_id);
      this.#remember();
    }
    this.#setView(applyEvent(this.view, frame));
    if (frame.type === 'reply_part' || frame.type === 'reply' || frame.type === 'turn_failed')
      this.#answer(frame, replayed);
    if (frame.type === 'message' && !replayed && this.#memory.mode === 'voice')
      for (const sentence of sentencesOf(frame.text, true)) this.#o.speak?.(sentence);
    if (frame.type === 'conversation_ended') this.#finish(frame.reason);
  }

  /**
   * A turn's reply as it comes. The tab that asked reads out each sentence once it is complete
   * (a voice turn) and, with the final reply, runs the client actions that need no click; every
   * tab tells the page. A turn asked here is forgotten once answered or failed.
   */
  #answer(frame: Extract<ServerFrame, { type: 'reply_part' | 'reply' | 'turn_failed' }>, replayed: boolean): void {
    const question = this.view.lines.find((l) => l.who === 'user' && l.turnId === frame.turn_id);
    const clientTurnId = question?.clientTurnId ?? '';
    const asked = this.#memory.asked[clientTurnId];
    if (frame.type === 'turn_failed') {
      if (asked) this.#forgetAsked(clientTurnId);
      return;
    }
    const final = frame.type === 'reply';
    if (asked?.mode === 'voice') {
      const text = final ? frame.text : (this.view.lines.find((l) => l.key === replyKey(frame.turn_id))?.text ?? '');
      const next = unspoken(text, final, asked.spoken);
      if (next.spoken !== asked.spoken) {
        asked.spoken = next.spoken;
        if (!final) this.#remember();
      }
      for (const sentence of next.sentences) this.#o.speak?.(sentence);
    }
    if (!final) return;
    if (asked) {
      this.#forgetAsked(clientTurnId);
      for (const action of frame.actions ?? [])
        if (action.type === 'client' && !action.label) this.#o.act?.(action, frame.turn_id);
    }
    this.#emit({
      type: 'reply',
      turnId: frame.turn_id,
      text: frame.text,
      actions: frame.actions ?? [],
      mode: question?.mode,
      replayed,
      speak: asked?.mode === 'voice',
    });
  }

  #forgetAsked(clientTurnId: string): void {
    delete this.#memory.asked[clientTurnId];
    this.#remember();
  }

  #closed(code: number): void {
    clearTimeout(this.#refreshTimer);
    if (this.#stopped || this.#link === 'ended') return;
    if (code === Close.ended) return this.#finish('deployment_inactive');
    if (code === Close.unknownConversation || code === Close.forbidden) {
      // The remembered conversation is not ours (or gone): start afresh rather than loop.
      this.#memory.conversation_id = undefined;
      this.#lastSeq = 0;
      this.#historySeq = undefined;
      this.#setView({
        ...emptyView(),
        status: this.view.status,
        lines: this.view.lines.filter((l) => l.state === 'sending'),
      });
    }
    if (code === Close.badToken) this.#token = undefined;
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#stopped) return;
    this.#setStatus('reconnecting');
    const ceiling = Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.#attempts++);
    // Full jitter: a restarted server is not met by every widget in the same millisecond.
    this.#retryTimer = setTimeout(() => void this.#connect(), ceiling / 2 + Math.random() * (ceiling / 2));
  }

  #scheduleRefresh(): void {
    clearTimeout(this.#refreshTimer);
    if (!this.#token) return;
    const inMs = Math.max(this.#token.expiresMs - REFRESH_BEFORE_MS - Date.now(), 1_000);
    this.#refreshTimer = setTimeout(
      async () => {
        try {
          this.#token = undefined;
          const token = await this.#freshToken();
          this.#send({ type: 'refresh_token', token });
          this.#scheduleRefresh();
        } catch (err) {
          this.#fail('token_unavailable', `Could not refresh the user token: ${String(err)}`);
        }
      },
      Math.min(inMs, 2 ** 31 - 1),
    );
  }

  async #freshToken(): Promise<string> {
    if (this.#token && this.#token.expiresMs - Date.now() > REFRESH_BEFORE_MS) return this.#token.value;
    const value = await this.#o.getToken();
    this.#token = { value, expiresMs: expiryOf(value) };
    return value;
  }

  #finish(reason: string): void {
    this.#memory = forgotten(this.#memory.language);
    this.#remember();
    this.#link = 'ended';
    this.#setView({ ...this.view, status: 'ended', ended: this.view.ended ?? (reason as View['ended']) });
    this.#emit({ type: 'ended', reason });
  }

  #refuseNewestTurn(code: string): void {
    const newest = [...this.view.lines].reverse().find((l) => l.state === 'sending');
    if (!newest) return;
    this.#memory.unconfirmed = this.#memory.unconfirmed.filter((t) => t.client_turn_id !== newest.clientTurnId);
    delete this.#memory.asked[newest.clientTurnId ?? ''];
    this.#remember();
    this.#setView({
      ...this.view,
      lines: this.view.lines.map((l) => (l === newest ? { ...l, state: 'failed', reason: code } : l)),
    });
  }

  #sendTurn(turn: Remembered['unconfirmed'][number]): void {
    if (this.#link === 'open') this.#send({ type: 'user_turn', ...turn });
  }

  #send(frame: ClientFrame): void {
    if (this.#ws?.readyState === OPEN) this.#ws.send(JSON.stringify(frame));
  }

  #setStatus(link: Status): void {
    this.#link = link;
    this.#setView({ ...this.view, status: this.#statusOf(link) });
  }

  /** What the panel says: the socket's state, unless the browser reports no network. */
  #statusOf(link: Status): Status {
    return this.#offline && link !== 'ended' ? 'offline' : link;
  }

  #fail(code: string, message: string): void {
    this.#emit({ type: 'error', code, message });
  }

  /** A turn shown at once, before the server confirms it. */
  #addSending({ client_turn_id, text, mode }: Remembered['unconfirmed'][number]): void {
    this.#setView({
      ...this.view,
      lines: [
        ...this.view.lines,
        { key: client_turn_id, who: 'user', text, mode, clientTurnId: client_turn_id, state: 'sending' },
      ],
    });
  }

  #setView(view: View): void {
    this.view = view;
    for (const viewer of this.#viewers) viewer(view);
  }

  #emit(event: SessionEvent): void {
    for (const listener of this.#listeners) listener(event);
  }

  get #key(): string {
    return `concierge:${this.#o.deploymentId}`;
  }

  #recall(): Remembered {
    try {
      const stored = JSON.parse(this.#o.storage?.getItem(this.#key) ?? 'null') as Remembered | null;
      // Remembered by an older widget: no turns asked.
      if (stored && Array.isArray(stored.unconfirmed)) return { ...stored, asked: stored.asked ?? {} };
    } catch {
      // unreadable: start afresh
    }
    return forgotten();
  }

  #remember(): void {
    try {
      this.#o.storage?.setItem(this.#key, JSON.stringify(this.#memory));
    } catch {
      // storage full or disabled: the conversation just won't survive a reload
    }
  }
}

/**
 * The token's `exp` in ms, read from the token itself: a refreshed token gets no new `ready`.
 * 0 if unreadable (the server refuses such a token anyway; a new one is fetched next time).
 */
function expiryOf(token: string): number {
  try {
    const payload = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : 0;
  } catch {
    return 0;
  }
}
