import type { RawData } from 'ws';
import { byteLength } from './client-message.js';
import type { SessionSocket } from './session-socket.js';

/**
 * What one socket may have sent that is not handled yet. Reading pauses while a message is being
 * handled (or `hello`'s replay is pending); what one network read already holds still arrives, so
 * a burst of small frames fits, and past either bound the socket is closed rather than the process
 * made to hold its flood.
 */
export const MAX_QUEUED_MESSAGES = 1_024;
export const MAX_QUEUED_BYTES = 1024 * 1024;

/**
 * What one socket sent and is not handled yet: handled one at a time, in order (a turn sent right
 * after `hello` finds its conversation), reading paused while any waits.
 */
export class SocketInbox {
  #queue: Promise<void> = Promise.resolve();
  /** Messages received and not yet handled, and their bytes. */
  readonly #queued = { messages: 0, bytes: 0 };

  constructor(
    private readonly socket: SessionSocket,
    /** A handler's failure is the socket's. */
    private readonly failed: (err: unknown) => void,
  ) {}

  /** Takes a message to handle after those before it; false past either bound, when the socket must end. */
  received(data: RawData, handle: () => Promise<void>): boolean {
    const bytes = byteLength(data);
    this.#queued.messages++;
    this.#queued.bytes += bytes;
    if (this.#queued.messages > MAX_QUEUED_MESSAGES || this.#queued.bytes > MAX_QUEUED_BYTES) return false;
    this.socket.pause();
    void this.enqueue(handle).finally(() => {
      this.#queued.messages--;
      this.#queued.bytes -= bytes;
      if (!this.#queued.messages) this.socket.resume();
    });
    return true;
  }

  /** Runs `work` after what is already queued. */
  enqueue(work: () => Promise<void>): Promise<void> {
    this.#queue = this.#queue.then(work).catch(this.failed);
    return this.#queue;
  }
}
