/**
 * Tells sockets that their conversation has new stored events. It carries ids only: a listener
 * reads what is new from the store, so a lost or repeated signal costs a read, never an event.
 */
export interface ConversationBus {
  /** Call after the commit that stored the events. */
  publish(conversationId: string): void;
  subscribe(conversationId: string, listener: () => void): () => void;
  close(): Promise<void>;
}

/** One process: every socket is here, so publishing is calling the listeners. */
export class LocalBus implements ConversationBus {
  readonly #listeners = new Map<string, Set<() => void>>();

  publish(conversationId: string): void {
    for (const listener of this.#listeners.get(conversationId) ?? []) listener();
  }

  subscribe(conversationId: string, listener: () => void): () => void {
    let set = this.#listeners.get(conversationId);
    if (!set) this.#listeners.set(conversationId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (!set.size) this.#listeners.delete(conversationId);
    };
  }

  /** Conversations with a listener on this node. */
  subscribed(): string[] {
    return [...this.#listeners.keys()];
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
