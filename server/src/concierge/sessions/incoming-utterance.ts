import { AUDIO_SAMPLE_RATE } from '#protocol/frames';
import { AppError } from '../../errors.js';

const BYTES_PER_MS = (AUDIO_SAMPLE_RATE * 2) / 1000;
/** The longest utterance the service takes: 30 s of 16 kHz 16-bit mono. */
export const MAX_UTTERANCE_MS = 30_000;

/** Where the audio an utterance holds is counted: the process's speech budget. */
export interface AudioHold {
  /** Takes `bytes` more; false when there is no room. */
  hold(bytes: number): boolean;
  release(bytes: number): void;
}

/**
 * One utterance arriving over a widget's socket, between `audio_start` and `audio_end`. A dropped
 * one (too long, over the budget, or refused at its start) keeps its place until its end so its
 * later frames are ignored, but holds no audio.
 */
export class IncomingUtterance {
  #chunks: Buffer[] = [];
  #bytes = 0;
  /** What this utterance holds of the budget now. */
  #held = 0;
  #dropped: boolean;

  constructor(
    readonly clientTurnId: string,
    readonly language: string | undefined,
    private readonly budget: AudioHold,
    refused = false,
  ) {
    this.#dropped = refused;
  }

  get dropped(): boolean {
    return this.#dropped;
  }

  /**
   * Adds a frame of PCM; `too_long` when this frame took the utterance past 30 s, `no_room` when
   * the process holds all the audio it may (it is dropped then, either way).
   */
  add(frame: Buffer): 'kept' | 'too_long' | 'no_room' | 'ignored' {
    if (this.#dropped) return 'ignored';
    if (this.#bytes + frame.length > MAX_UTTERANCE_MS * BYTES_PER_MS) {
      this.drop();
      return 'too_long';
    }
    if (!this.budget.hold(frame.length)) {
      this.drop();
      return 'no_room';
    }
    this.#held += frame.length;
    this.#chunks.push(frame);
    this.#bytes += frame.length;
    return 'kept';
  }

  /** Frees the audio; frames from here on are ignored. */
  drop(): void {
    this.#dropped = true;
    this.#chunks = [];
    this.#free();
  }

  #free(): void {
    this.budget.release(this.#held);
    this.#held = 0;
  }

  /** How long the audio is. */
  get audioMs(): number {
    return Math.round(this.#bytes / BYTES_PER_MS);
  }

  /** The samples so far, whole, kept as well: a look at the words before the utterance ends (README, Hands-free voice). */
  copy(): Buffer {
    const all = Buffer.concat(this.#chunks, this.#bytes);
    return all.length % 2 ? all.subarray(0, all.length - 1) : all;
  }

  /** The samples, whole (a trailing odd byte is not half a sample), handed over: the budget no longer counts them. */
  pcm(): Buffer {
    const all = this.copy();
    this.#chunks = [];
    this.#free();
    return all;
  }
}

/** What the widget is told of a frame its utterance could not keep (README, Voice in every browser). */
export function refusalOfFrame(added: ReturnType<IncomingUtterance['add']>): AppError | undefined {
  if (added === 'too_long')
    return new AppError('speech_too_long', 'An utterance may be at most 30 seconds long; this one was dropped');
  if (added === 'no_room')
    return new AppError(
      'speech_busy',
      'Too many visitors are speaking right now; this utterance was dropped: try again in a moment, or type',
    );
  return undefined;
}
