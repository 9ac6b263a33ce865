import { AUDIO_SAMPLE_RATE } from '../protocol/frames.js';

const BYTES_PER_MS = (AUDIO_SAMPLE_RATE * 2) / 1000;
/** The longest utterance the service takes: 30 s of 16 kHz 16-bit mono. */
export const MAX_UTTERANCE_MS = 30_000;

/**
 * One utterance arriving over a widget's socket, between `audio_start` and `audio_end`. A dropped
 * one (too long, or refused at its start) keeps its place until its end so its later frames are
 * ignored, but holds no audio.
 */
export class IncomingUtterance {
  #chunks: Buffer[] = [];
  #bytes = 0;
  #dropped: boolean;

  constructor(
    readonly clientTurnId: string,
    readonly language: string | undefined,
    refused = false,
  ) {
    this.#dropped = refused;
  }

  get dropped(): boolean {
    return this.#dropped;
  }

  /** Adds a frame of PCM; `too_long` when this frame took the utterance past 30 s (it is dropped then). */
  add(frame: Buffer): 'kept' | 'too_long' | 'ignored' {
    if (this.#dropped) return 'ignored';
    if (this.#bytes + frame.length > MAX_UTTERANCE_MS * BYTES_PER_MS) {
      this.drop();
      return 'too_long';
    }
    this.#chunks.push(frame);
    this.#bytes += frame.length;
    return 'kept';
  }

  /** Frees the audio; frames from here on are ignored. */
  drop(): void {
    this.#dropped = true;
    this.#chunks = [];
  }

  /** How long the audio is. */
  get audioMs(): number {
    return Math.round(this.#bytes / BYTES_PER_MS);
  }

  /** The samples, whole: a trailing odd byte is not half a sample. */
  pcm(): Buffer {
    const all = Buffer.concat(this.#chunks, this.#bytes);
    return all.length % 2 ? all.subarray(0, all.length - 1) : all;
  }
}
