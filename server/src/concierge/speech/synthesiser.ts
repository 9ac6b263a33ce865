import type { SynthesisEngine } from '#protocol/frames';

export type { SynthesisEngine };

/** One sentence to say: the text as it is to be spoken (pronunciations applied), in whose voice, how fast. */
export interface SpeechRequest {
  text: string;
  /** The engine's voice id (the agent's `voice.service`), or undefined for the engine's own choice for `language`. */
  voice: string | undefined;
  /** 0.5 to 2; 1 is the voice's own pace. */
  speed: number;
  /** BCP 47 (`de-DE`): what the engine picks a voice by when none is named. */
  language: string;
}

/**
 * Turns a sentence into 16-bit little-endian mono PCM at `sampleRate`, handing the audio over as it
 * comes so the first of it can be sent before the rest exists. Text goes to the synthesiser and
 * nowhere else: never the store or the logs. A new engine is one file implementing this, and one
 * line in synthesisers.ts.
 */
export interface Synthesiser {
  readonly engine: SynthesisEngine;
  readonly sampleRate: number;
  /** The voice the engine uses for `request` (the agent's, or its own for the language): what the cache keys on. */
  voiceFor(request: Pick<SpeechRequest, 'voice' | 'language'>): string;
  /** Resolves once the whole sentence was handed to `audio`; rejects when the engine cannot say it, or on `signal`. */
  synthesise(request: SpeechRequest, audio: (pcm: Buffer) => void, signal: AbortSignal): Promise<void>;
}
