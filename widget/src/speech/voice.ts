import type { VoiceSink } from '../session/client';
import type { Player } from './player';

/** The agent's voice as the widget holds it: a sink for what to say, stopped by the visitor, muted by them. */
export interface Voice extends VoiceSink {
  /** The visitor speaks or types: whatever is being said stops now. */
  stop(): void;
  /** Lowered while the visitor may be speaking over it, and back (README, Hands-free voice). */
  duck(down: boolean): void;
  muted: boolean;
}

/**
 * The agent's voice, its player fetched with the first sentence it is given (README, The agent's
 * own voice): what comes while it loads is handed over in order once it has; nothing is fetched
 * while muted, or for a visitor who never hears a reply.
 */
export function lazyVoice(load: () => Promise<Player>): Voice {
  let player: Promise<Player> | undefined;
  let muted = false;
  const later = (call: (player: Player) => void) => void (muted || (player ??= load()).then(call));
  return {
    say: (at, text) => later((p) => p.say(at, text)),
    speech: (frame) => later((p) => p.speech(frame)),
    audio: (pcm) => later((p) => p.audio(pcm)),
    stop: () => void player?.then((p) => p.stop()),
    duck: (down) => void player?.then((p) => p.duck(down)),
    get muted() {
      return muted;
    },
    set muted(value: boolean) {
      muted = value;
      void player?.then((p) => (p.muted = value));
    },
  };
}
