import { AppError } from '../../errors.js';
import { WindowCounter } from '../../shared/window-counter.js';

/** Whose an utterance is: each is counted against its conversation, its visitor and its deployment. */
export interface Speaker {
  deploymentId: string;
  conversationId: string;
  /** The visitor (the token's `sub`). */
  sub: string;
}

type Scope = 'conversation' | 'visitor' | 'deployment';
const SCOPES: readonly Scope[] = ['conversation', 'visitor', 'deployment'];

/** How much speech the service takes (README, Voice in every browser). */
export interface SpeechLimits {
  /** Utterances begun per minute, recognised or not. */
  utterancesPerMinute: Record<Scope, number>;
  /** Seconds of audio received per minute. */
  audioSecondsPerMinute: Record<Scope, number>;
  /** Audio of utterances in progress this process holds at once, every socket together. */
  maxAudioBytes: number;
  /** An utterance that receives no audio for this long is dropped and its audio freed. */
  utteranceIdleMs: number;
}

export const SPEECH_LIMITS: SpeechLimits = {
  utterancesPerMinute: { conversation: 12, visitor: 12, deployment: 600 },
  // One voice gives at most 60 s a minute; the room above that is for a turn resent after a drop.
  audioSecondsPerMinute: { conversation: 90, visitor: 90, deployment: 3_600 },
  maxAudioBytes: 64 * 1024 * 1024,
  utteranceIdleMs: 5_000,
};

const BYTES_PER_SECOND = 16_000 * 2;

/**
 * What speech a process takes, so no visitor or customer can take it all: utterances and audio
 * per minute per conversation, visitor and deployment (checked when an utterance begins), and the
 * audio held for utterances in progress.
 */
export class SpeechBudget {
  readonly #utterances = new Map<Scope, WindowCounter>();
  readonly #audio = new Map<Scope, WindowCounter>();
  #held = 0;

  constructor(readonly limits: SpeechLimits) {
    for (const scope of SCOPES) {
      this.#utterances.set(scope, new WindowCounter(limits.utterancesPerMinute[scope]));
      this.#audio.set(scope, new WindowCounter(limits.audioSecondsPerMinute[scope] * BYTES_PER_SECOND));
    }
  }

  /** An utterance begins: counted, or refused with `speech_busy` (and not counted) when a budget is spent. */
  admit(speaker: Speaker): AppError | undefined {
    const now = Date.now();
    for (const scope of SCOPES) {
      const key = keyOf(speaker, scope);
      const waitS = Math.max(
        this.#utterances.get(scope)!.blockedFor(key, now),
        this.#audio.get(scope)!.blockedFor(key, now),
      );
      if (waitS)
        return new AppError(
          'speech_busy',
          `${TOO_MUCH[scope]} in the last minute; try again in ${waitS} s, or type`,
          undefined,
          waitS,
        );
    }
    if (this.#held >= this.limits.maxAudioBytes)
      return new AppError('speech_busy', 'Too many visitors are speaking right now; try again in a moment, or type');
    for (const scope of SCOPES) this.#utterances.get(scope)!.record(keyOf(speaker, scope), now);
    return undefined;
  }

  /** Audio arriving for an utterance: counted per minute and held; false when the process holds all it may. */
  hold(speaker: Speaker, bytes: number): boolean {
    if (this.#held + bytes > this.limits.maxAudioBytes) return false;
    this.#held += bytes;
    const now = Date.now();
    for (const scope of SCOPES) this.#audio.get(scope)!.record(keyOf(speaker, scope), now, bytes);
    return true;
  }

  /** Audio no longer held: the utterance was dropped, or handed to the recogniser. */
  release(bytes: number): void {
    this.#held -= bytes;
  }
}

const TOO_MUCH: Record<Scope, string> = {
  conversation: 'This conversation has spoken a lot',
  visitor: 'You have spoken a lot',
  deployment: 'Visitors of this site have spoken a lot',
};

function keyOf(speaker: Speaker, scope: Scope): string {
  if (scope === 'conversation') return speaker.conversationId;
  if (scope === 'visitor') return `${speaker.deploymentId}\n${speaker.sub}`;
  return speaker.deploymentId;
}
