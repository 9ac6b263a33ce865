import type { KnownValue } from './detectors.js';

/** Conversations remembered at most, and for how long since a value was last found in one. */
const CONVERSATIONS = 10_000;
const KEPT_MS = 2 * 3_600_000;

/**
 * The names and addresses a model found in each conversation so far (README, Privacy: what is kept),
 * so that every later text of it (the agent saying the name back, a person's message) stores them
 * redacted too. In this node's memory only, never stored: a conversation another node handles
 * redacts what its own visitor turns revealed.
 */
export class KnownValues {
  readonly #byConversation = new Map<string, { values: KnownValue[]; at: number }>();

  of(conversationId: string): readonly KnownValue[] {
    const known = this.#byConversation.get(conversationId);
    if (!known) return [];
    if (Date.now() - known.at <= KEPT_MS) return known.values;
    this.#byConversation.delete(conversationId);
    return [];
  }

  add(conversationId: string, values: readonly KnownValue[]): void {
    if (!values.length) return;
    const before = this.of(conversationId);
    const fresh = values.filter((v) => !before.some((b) => b.kind === v.kind && b.text === v.text));
    this.#byConversation.delete(conversationId);
    if (this.#byConversation.size >= CONVERSATIONS)
      this.#byConversation.delete(this.#byConversation.keys().next().value!);
    this.#byConversation.set(conversationId, { values: [...before, ...fresh], at: Date.now() });
  }
}
