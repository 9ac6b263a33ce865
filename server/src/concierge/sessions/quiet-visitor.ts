import type { TurnTaking } from '../../agents/agent-turn-taking.js';

/** How often an open mic looks at how long its visitor has been quiet. */
const LOOK_EVERY_MS = 250;

/**
 * A quiet hands-free visitor (README, Hands-free voice): once nothing has happened for
 * `reengage_after_s` (nobody speaking, no reply awaited or playing, no person in the conversation),
 * the agent asks once if they are still there; after `close_after_s` more, the mic closes. Speech
 * starts the count again, and lets the agent ask again later.
 */
export class QuietVisitor {
  #lastBusyMs = performance.now();
  #asked = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly parts: {
      settings(): Pick<TurnTaking, 'reengage_after_s' | 'close_after_s'>;
      /** Whether anything is going on: speech, a turn being found or answered, the agent's voice, a person. */
      busy(): boolean;
      reengage(): void;
      close(): void;
    },
  ) {
    this.#timer = setInterval(() => this.#look(), LOOK_EVERY_MS);
    this.#timer.unref();
  }

  /** The visitor spoke: they are there. */
  spoke(): void {
    this.#asked = false;
    this.#lastBusyMs = performance.now();
  }

  dispose(): void {
    clearInterval(this.#timer);
  }

  #look(): void {
    const now = performance.now();
    if (this.parts.busy()) {
      this.#lastBusyMs = now;
      return;
    }
    const quietMs = now - this.#lastBusyMs;
    const { reengage_after_s: reengageS, close_after_s: closeS } = this.parts.settings();
    if (reengageS && !this.#asked) {
      if (quietMs < reengageS * 1000) return;
      this.#asked = true;
      this.#lastBusyMs = now;
      return this.parts.reengage();
    }
    if (closeS && quietMs >= closeS * 1000) {
      this.dispose();
      this.parts.close();
    }
  }
}
