import type { StoreHealth } from '../../store/store-health.js';
import type { StoredFrame } from '../events/event.repository.js';
import type { SessionSocket } from './session-socket.js';

/** A peer whose unsent buffer passes this is not reading: it is dropped and resumes from its last_seq. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * The replay hands the socket this much at most before waiting for it to drain, so a long
 * history never trips the slow-peer rule above for a reader that keeps up.
 */
const REPLAY_WINDOW_BYTES = 256 * 1024;
/** Stored events read per page of a replay. */
export const REPLAY_PAGE = 500;
/** A replay that cannot hand over its next frame for this long is talking to a peer that does not read. */
export const DRAIN_TIMEOUT_MS = 30_000;

/** The session a cursor serves. */
export interface CursorOwner {
  /** True once the session is over: nothing more is sent. */
  isClosed(): boolean;
  /** The conversation's `conversation_ended` went out. */
  conversationEnded(): void;
  /** The conversation is gone (erased on another node: its `conversation_ended` went with it). */
  conversationGone(): void;
  /** Reading the store failed. */
  failed(err: unknown): void;
  /** A stored frame went out on the socket. */
  sent(frame: StoredFrame): void;
}

export interface CursorSource {
  /** Stored events of the conversation after `seq`, at most `limit`, in order; undefined once the conversation is gone. */
  framesAfter(conversationId: string, seq: number, limit: number): Promise<StoredFrame[] | undefined>;
}

/**
 * Where one socket is in its conversation's events: every stored event past `sentSeq` goes out
 * once, in order, whether it comes live from the bus or is read back from the store.
 */
export class EventCursor {
  private flushing = false;
  private flushAgain = false;
  /** Aborted when the session ends: a read waiting out a store outage gives up. */
  private readonly stopped = new AbortController();

  private readonly conversationId: string;
  /** The seq the widget already has. */
  private sentSeq: number;

  constructor(
    private readonly parts: { socket: SessionSocket; source: CursorSource; owner: CursorOwner; health: StoreHealth },
    from: { conversationId: string; sentSeq: number },
    private readonly settings: { drainTimeoutMs: number },
  ) {
    ({ conversationId: this.conversationId, sentSeq: this.sentSeq } = from);
  }

  /** Frames just committed on this node go straight out when they follow what was sent; else the store is read. */
  deliver(frames: readonly StoredFrame[] | undefined): void {
    if (!frames?.length || this.flushing || frames[0]!.seq !== this.sentSeq + 1) {
      void this.flush();
      return;
    }
    for (const frame of frames) if (!this.send(frame)) return;
    // A peer that stops reading is dropped; it resumes from its last_seq.
    if (this.parts.socket.bufferedAmount > MAX_BUFFERED_BYTES) this.parts.socket.terminate();
  }

  /**
   * Sends every stored event past what this socket has sent, one pass at a time, paced by the
   * socket's drain: past {@link REPLAY_WINDOW_BYTES} unsent, it waits until that much is handed to
   * the network, so a reader that keeps up gets any length of history on one connection.
   * A read that meets a store outage is retried until the store answers (a restart or failover
   * costs the widget a pause, not its socket); it never rejects: any other failure is reported
   * through `owner.failed`.
   */
  async flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    try {
      do {
        this.flushAgain = false;
        const frames = await this.parts.health.persist(
          "reading a conversation's events",
          () => this.parts.source.framesAfter(this.conversationId, this.sentSeq, REPLAY_PAGE),
          this.stopped.signal,
        );
        if (!frames) return this.parts.owner.conversationGone();
        for (const frame of frames) {
          const paced = this.parts.socket.bufferedAmount + frame.frame.length > REPLAY_WINDOW_BYTES;
          if (!(paced ? await this.sendDrained(frame) : this.send(frame))) return;
        }
        if (frames.length === REPLAY_PAGE) this.flushAgain = true;
      } while (this.flushAgain && !this.parts.owner.isClosed());
    } catch (err) {
      if (!this.stopped.signal.aborted) this.parts.owner.failed(err);
    } finally {
      this.flushing = false;
    }
  }

  /** The session is over: a read waiting for the store stops waiting. */
  stop(): void {
    this.stopped.abort();
  }

  /** Sends a frame and resolves once the socket has handed it to the network; a peer that takes nothing for too long is dropped. */
  private sendDrained(frame: StoredFrame): Promise<boolean> {
    return new Promise((resolve) => {
      const stalled = setTimeout(() => {
        this.parts.socket.terminate();
        resolve(false);
      }, this.settings.drainTimeoutMs);
      const sent = this.send(frame, () => {
        clearTimeout(stalled);
        resolve(!this.parts.owner.isClosed());
      });
      if (!sent) {
        clearTimeout(stalled);
        resolve(false);
      }
    });
  }

  /** Sends one stored frame if this socket has not sent it yet; false once the session is over. */
  private send(stored: StoredFrame, onSent?: () => void): boolean {
    const { seq, type, frame } = stored;
    if (this.parts.owner.isClosed()) return false;
    if (seq <= this.sentSeq) {
      onSent?.();
      return true;
    }
    this.parts.socket.send(frame, onSent);
    this.sentSeq = seq;
    this.parts.owner.sent(stored);
    if (type !== 'conversation_ended') return true;
    this.parts.owner.conversationEnded();
    return false;
  }
}
