/** Turns whose end of speech is kept until their reply's first audio, for what the visitor waited. */
const REMEMBERED_TURNS = 20;

/**
 * The turns an open mic made (README, Hands-free voice), from the end of their speech to their
 * reply: whether a reply is awaited (a quiet visitor is not asked anything meanwhile), and how long
 * after the visitor stopped speaking its first audio went out.
 */
export class FoundTurns {
  /** Turns made and not yet answered, by turn id once accepted. */
  readonly #awaiting = new Set<string>();
  /** When each turn's speech ended (`performance.now()`), by client_turn_id, then by turn id. */
  readonly #speechEnded = new Map<string, number>();

  /** A turn is made whose speech ended at `endedAt`. */
  made(clientTurnId: string, endedAt: number): void {
    this.#speechEnded.set(clientTurnId, endedAt);
    if (this.#speechEnded.size > REMEMBERED_TURNS) this.#speechEnded.delete(this.#speechEnded.keys().next().value!);
  }

  /** A turn of this mic was stored as `turnId`: its reply is awaited, and its first audio measured. */
  accepted(clientTurnId: string, turnId: string): void {
    const ended = this.#speechEnded.get(clientTurnId);
    if (ended === undefined) return;
    this.#speechEnded.delete(clientTurnId);
    this.#speechEnded.set(turnId, ended);
    this.#awaiting.add(turnId);
  }

  answered(turnId: string): void {
    this.#awaiting.delete(turnId);
  }

  get awaiting(): boolean {
    return this.#awaiting.size > 0;
  }

  /** How long after the visitor stopped speaking the first audio of this turn's reply went out; once. */
  firstAudio(turnId: string): number | undefined {
    const ended = this.#speechEnded.get(turnId);
    this.#speechEnded.delete(turnId);
    return ended === undefined ? undefined : Math.round(performance.now() - ended);
  }
}
