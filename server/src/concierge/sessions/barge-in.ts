import type { TurnTaking } from '../../agents/agent-turn-taking.js';
import { onlyBackchannel, onlyEcho } from '../speech/turn-taking.js';
import type { SessionLine } from './session-line.js';
import type { Playing } from './voice-output.js';

/** The agent's voice on the socket, as barge-in sees it. */
export interface AgentVoiceNow {
  playing(): Playing | undefined;
  interrupt(): void;
}

/** Speech that began over the agent's reply: which reply, what it was saying, and what became of it. */
interface Over {
  turnId: string;
  saying: string;
  interrupted: boolean;
  resume: NodeJS.Timeout | undefined;
}

/**
 * Barge-in (README, Hands-free voice): speech over the agent's reply interrupts it once it has
 * lasted `interruption.min_speech_ms` and its words are more than someone listening ("mm-hm", the
 * `ignore` list) or the agent's own words coming back; `interrupt` is sent and no more of the reply.
 * The widget lowers the voice at `speech_started`: if nothing interrupts within `resume_after_ms`,
 * `resume` brings it back.
 */
export class BargeIn {
  #over: Over | undefined;
  /** A look at the words so far is with the recogniser: one at a time. */
  #probing = false;

  constructor(
    private readonly parts: {
      line: SessionLine;
      voice: AgentVoiceNow;
      settings(): TurnTaking['interruption'];
      language(): string;
    },
  ) {}

  /** Speech began: over a reply, it may be an interruption. */
  speechStarted(): void {
    if (this.#over && !this.#over.interrupted) return;
    const playing = this.parts.voice.playing();
    if (!playing?.turnId) return;
    const over: Over = { turnId: playing.turnId, saying: playing.text, interrupted: false, resume: undefined };
    // Stands after the speech is judged: a false alarm's voice comes back at its time, not before.
    over.resume = setTimeout(() => {
      if (!over.interrupted) this.parts.line.send({ type: 'resume', turn_id: over.turnId });
    }, this.parts.settings().resume_after_ms);
    this.#over = over;
  }

  /**
   * The speech goes on, `speechMs` of it so far: once it is long enough, its words so far are looked
   * at (`recognise` gives them), and they interrupt unless they are only listening or echo.
   */
  speechGoesOn(speechMs: number, recognise: () => Promise<string>): void {
    const over = this.#over;
    if (!over || over.interrupted || this.#probing || speechMs < this.parts.settings().min_speech_ms) return;
    this.#probing = true;
    void recognise()
      .then((words) => {
        if (this.#over === over && this.#interrupts(words)) this.#interrupt(over);
      })
      .catch(() => undefined)
      .finally(() => (this.#probing = false));
  }

  /**
   * The words of speech that stopped: whether they belong to the visitor's turn. Over a reply they
   * do unless they are only listening or echo, and they interrupt it; elsewhere any words do.
   */
  heard(words: string): boolean {
    const over = this.#over;
    if (!over) return words.length > 0;
    if (over.interrupted) return words.length > 0;
    if (!this.#interrupts(words)) return false;
    this.#interrupt(over);
    return true;
  }

  /** The speech over the reply is over and judged: the next speech is looked at afresh. */
  settled(): void {
    this.#over = undefined;
  }

  dispose(): void {
    if (this.#over) clearTimeout(this.#over.resume);
    this.#over = undefined;
  }

  #interrupts(words: string): boolean {
    if (!words) return false;
    const { ignore } = this.parts.settings();
    return !onlyBackchannel(words, this.parts.language(), ignore) && !onlyEcho(words, this.#over?.saying ?? '');
  }

  #interrupt(over: Over): void {
    over.interrupted = true;
    clearTimeout(over.resume);
    this.parts.line.send({ type: 'interrupt', turn_id: over.turnId });
    this.parts.voice.interrupt();
  }
}
