import type { Logger } from 'pino';

/** A failing engine is logged at most this often: every utterance or sentence fails alike until it is fixed. */
const FAILURE_LOG_EVERY_MS = 60_000;

/**
 * The warning for a speech engine that failed (README, Voice in every browser; The agent's own
 * voice), at most once a minute: the engine and the reason only, never the audio, the words or a key.
 */
export class FailureLog {
  #lastLogged = 0;

  constructor(private readonly parts: { logger: Logger; message: string }) {}

  report(engine: string, err: unknown): void {
    const now = Date.now();
    if (now - this.#lastLogged < FAILURE_LOG_EVERY_MS) return;
    this.#lastLogged = now;
    this.parts.logger.warn({ engine, reason: err instanceof Error ? err.message : String(err) }, this.parts.message);
  }
}
