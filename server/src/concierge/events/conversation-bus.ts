import type { StoredFrame } from './event.repository.js';

/** Told new stored events; `frames` when the publisher has them at hand, else read the store. */
export type BusListener = (frames?: readonly StoredFrame[]) => void;

/**
 * Tells sockets that their conversation has new stored events. Across nodes it carries ids
 * only: a listener reads what is new from the store, so a lost or repeated signal costs a read,
 * never an event. On the node that committed them, the frames themselves come along, so a
 * socket that is up to date sends them without a read.
 */
export interface ConversationBus {
  /** Call after the commit that stored the events. */
  publish(conversationId: string, frames?: readonly StoredFrame[]): void;
  subscribe(conversationId: string, listener: BusListener): () => void;
  /** Told the id of every conversation another node stored events for (never on one process alone). */
  subscribeRemote(listener: (conversationId: string) => void): () => void;
  close(): Promise<void>;
}

/** One process: every socket is here, so publishing is calling the listeners. */
export class LocalBus implements ConversationBus {
  readonly #listeners = new Map<string, Set<BusListener>>();

  publish(conversationId: string, frames?: readonly StoredFrame[]): void {
    for (const listener of this.#listeners.get(conversationId) ?? []) listener(frames);
  }

  subscribe(conversationId: string, listener: BusListener): () => void {
    let set = this.#listeners.get(conversationId);
    if (!set) this.#listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (!set.size) this.#listeners.delete(conversationId);
    };
  }

  subscribeRemote(): () => void {
    return () => {};
  }

  /** Conversations with a listener on this node. */
  subscribed(): string[] {
    return [...this.#listeners.keys()];
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
