import { Close, type ClientFrame, type ServerFrame } from './protocol';
import type { Status } from './transcript';

/** The part of a browser WebSocket the session uses: the browser's own, or a fake in tests. */
export interface Socket {
  readonly readyState: number;
  onopen: ((event: Event) => void) | null;
  onmessage: ((message: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  /** `arraybuffer`: the agent's voice arrives as PCM the player takes as it is. */
  binaryType?: string;
  send(data: string | ArrayBuffer): void;
  close(code?: number): void;
}

/** What the browser says about the network and the page: hints the connection acts on at once. */
export interface Surroundings {
  online(): boolean;
  /** Calls back on the browser's `online` and `offline` events and when the page becomes visible. */
  watch(on: { online(): void; offline(): void; visible(): void }): () => void;
}

export interface ConnectionOptions {
  baseUrl: string;
  deploymentId: string;
  getToken(): Promise<string>;
  openSocket?: (url: string) => Socket;
  surroundings?: Surroundings;
}

/** What a connection asks of its session, and tells it. */
export interface ConnectionOwner {
  /**
   * What `hello` says beside the token: where it resumes (the conversation and the last event this
   * page has; nothing for a new one), the language the visitor chose (an agent's greeting follows
   * it), and whether this browser recognises speech itself.
   */
  hello(): { conversation_id?: string; last_seq?: number; language?: string; browser_recognition?: boolean };
  frame(frame: ServerFrame): void;
  /** A binary frame: the agent's voice, between its `speech` and `speech_end` (README, The agent's own voice). */
  audio(pcm: ArrayBuffer): void;
  /** What the panel should say now: the socket's state, or "offline". */
  status(status: Status): void;
  /** The socket closed with `code` (0: given up by the heartbeat) and `reason`; a reconnect follows unless the owner ended it. */
  closed(code: number, reason: string): void;
  error(code: string, message: string): void;
}

const MAX_BACKOFF_MS = 30_000;
const REFRESH_BEFORE_MS = 60_000;
/** Silence on the socket before the widget asks with `ping` whether it still works. */
export const QUIET_MS = 10_000;
/** How long a `ping` waits for any frame before the socket is given up and replaced. */
export const PONG_WAIT_MS = 10_000;
const OPEN = 1;

/**
 * The widget's socket (README, Concierge sessions): one at a time, reconnecting with exponential
 * backoff and full jitter, saying `hello` with a fresh token (and where to resume), refreshing the
 * token before it expires. A connection that dies without a close is found by its own heartbeat,
 * and the browser's word that the network is back skips whatever backoff is left.
 */
export class Connection {
  /** The socket's own state; the panel says "offline" over it while the browser reports no network. */
  link: Status = 'connecting';
  #ws: Socket | undefined;
  #attempts = 0;
  #stopped = false;
  #offline = false;
  #token: { value: string; expiresMs: number } | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #refreshTimer: ReturnType<typeof setTimeout> | undefined;
  #heartbeat: ReturnType<typeof setTimeout> | undefined;
  #unwatch: (() => void) | undefined;
  readonly #o: ConnectionOptions;
  readonly #owner: ConnectionOwner;

  constructor(o: ConnectionOptions, owner: ConnectionOwner) {
    this.#o = o;
    this.#owner = owner;
  }

  /** What the panel says: the socket's state, unless the browser reports no network. */
  get shown(): Status {
    return this.#offline && this.link !== 'ended' ? 'offline' : this.link;
  }

  start(): void {
    this.#stopped = false;
    const around = this.#o.surroundings;
    if (around && !this.#unwatch) {
      this.#offline = !around.online();
      this.#unwatch = around.watch({
        offline: () => {
          this.#offline = true;
          this.#setLink(this.link);
        },
        online: () => {
          this.#offline = false;
          this.#setLink(this.link);
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

  /** `ready` came: the wait between attempts starts over, and the token is refreshed before it runs out. */
  opened(): void {
    this.#attempts = 0;
    this.#scheduleRefresh();
    this.link = 'open';
  }

  /** Sends a frame (or audio) on the open socket; false when there is none. */
  send(frame: ClientFrame | ArrayBuffer): boolean {
    if (this.#ws?.readyState !== OPEN) return false;
    this.#ws.send(frame instanceof ArrayBuffer ? frame : JSON.stringify(frame));
    return true;
  }

  /** The browser says the network is back (or the page is seen again): no backoff left to wait out. */
  #reconnectNow(): void {
    if (this.#over()) return;
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
        this.#closed(0, '');
      }, PONG_WAIT_MS);
    }, QUIET_MS);
  }

  async #connect(): Promise<void> {
    if (this.#stopped || this.#ws) return;
    this.#setLink(this.link === 'connecting' ? 'connecting' : 'reconnecting');
    let token: string;
    try {
      token = await this.#freshToken();
    } catch (err) {
      this.#owner.error('token_unavailable', `Could not get a user token: ${String(err)}`);
      return this.#scheduleReconnect();
    }
    if (this.#stopped || this.#ws) return;
    const url = `${this.#o.baseUrl.replace(/^http/, 'ws')}/embed/concierge/${encodeURIComponent(this.#o.deploymentId)}/ws`;
    const ws = this.#o.openSocket ? this.#o.openSocket(url) : new WebSocket(url);
    this.#ws = ws;
    this.#watch(ws);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: 'hello', token, ...this.#owner.hello() } satisfies ClientFrame));
    };
    ws.onmessage = (message) => {
      if (this.#ws !== ws) return;
      this.#watch(ws);
      if (message.data instanceof ArrayBuffer) this.#owner.audio(message.data);
      else this.#owner.frame(JSON.parse(String(message.data)) as ServerFrame);
    };
    ws.onclose = (event) => {
      if (this.#ws !== ws) return;
      clearTimeout(this.#heartbeat);
      this.#ws = undefined;
      this.#closed(event.code, event.reason);
    };
  }

  #closed(code: number, reason: string): void {
    clearTimeout(this.#refreshTimer);
    if (this.#over()) return;
    if (code === Close.badToken) this.#token = undefined;
    this.#owner.closed(code, reason);
    if (!this.#over()) this.#scheduleReconnect();
  }

  /** Stopped by the page, or the conversation ended: nothing reconnects. */
  #over(): boolean {
    return this.#stopped || this.link === 'ended';
  }

  #scheduleReconnect(): void {
    if (this.#stopped) return;
    this.#setLink('reconnecting');
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
          this.send({ type: 'refresh_token', token });
          this.#scheduleRefresh();
        } catch (err) {
          this.#owner.error('token_unavailable', `Could not refresh the user token: ${String(err)}`);
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

  #setLink(link: Status): void {
    this.link = link;
    this.#owner.status(this.shown);
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
