import type { AgentVoice } from '../session/protocol';
import { type RecognitionConstructor, recogniserIn } from './recogniser-here';

/**
 * Why listening failed: the recognition error's name (`not-allowed`, `audio-capture`, `network`,
 * `service-not-allowed`, ...), or `unavailable` when recognition could not even start.
 */
export class ListenError extends Error {
  constructor(readonly reason: string) {
    super(`speech recognition failed: ${reason}`);
  }
}

/** What the widget needs of speech; the browser's Web Speech API by default, replaceable in tests. */
export interface Speech {
  /** False where the browser has no recognition: the mic button is hidden and text still works. */
  readonly canListen: boolean;
  /** Listens once; `onInterim` sees the words so far; resolves with the final words (empty if none), rejects with a {@link ListenError}. */
  listen(language: string, onInterim: (text: string) => void): Promise<string>;
  stopListening(): void;
  /**
   * Queues `text` after whatever is being said, in `language`: in the agent's voice (its name, rate
   * and pitch) when that voice speaks it, else the best voice the browser has for it. `progress`
   * hears each word begin, and the end: `said` false when nothing could be said.
   */
  speak(
    text: string,
    language: string,
    voice: AgentVoice | undefined,
    progress?: { boundary(charIndex: number): void; end(said: boolean): void },
  ): void;
  /** Barge-in: stops whatever is being said, and what waits to be. */
  silence(): void;
}

export function browserSpeech(win: Window = window): Speech {
  const Recognizer = recogniserIn(win);
  const synth = win.speechSynthesis as SpeechSynthesis | undefined;
  let active: InstanceType<RecognitionConstructor> | undefined;
  return {
    canListen: Boolean(Recognizer),
    listen(language, onInterim) {
      return new Promise((resolve, reject) => {
        if (!Recognizer) return reject(new ListenError('unavailable'));
        const recognition = new Recognizer();
        active = recognition;
        recognition.lang = language;
        recognition.interimResults = true;
        recognition.continuous = false;
        let final = '';
        recognition.onresult = (event) => {
          let interim = '';
          for (let i = event.resultIndex; i < event.results.length; i++) {
            const result = event.results[i]!;
            if (result.isFinal) final += result[0].transcript;
            else interim += result[0].transcript;
          }
          onInterim((final + interim).trim());
        };
        recognition.onerror = (event) =>
          event.error === 'no-speech' || event.error === 'aborted' ? resolve('') : reject(new ListenError(event.error));
        recognition.onend = () => {
          active = undefined;
          resolve(final.trim());
        };
        try {
          recognition.start();
        } catch {
          active = undefined;
          reject(new ListenError('unavailable'));
        }
      });
    },
    stopListening() {
      active?.stop();
    },
    speak(text, language, voice, progress) {
      if (!synth) return progress?.end(false);
      const utterance = new SpeechSynthesisUtterance(text);
      if (progress) {
        utterance.onboundary = (event) => progress.boundary(event.charIndex);
        utterance.onend = () => progress.end(true);
        utterance.onerror = () => progress.end(false);
      }
      utterance.lang = language;
      const chosen = voiceFor(synth.getVoices(), language, voice?.name);
      if (chosen) utterance.voice = chosen;
      // The Web Speech API's ranges: rate 0.1 to 10, pitch 0 to 2 (1 is the voice's own).
      if (typeof voice?.rate === 'number') utterance.rate = clamp(voice.rate, 0.1, 10);
      if (typeof voice?.pitch === 'number') utterance.pitch = clamp(voice.pitch, 0, 2);
      synth.speak(utterance);
    },
    silence() {
      synth?.cancel();
    },
  };
}

let shared: Speech | undefined;
/** The page's one browser speech, made when the panel or the player first needs it. */
export const pageSpeech = (): Speech => (shared ??= browserSpeech());

const tagOf = (lang: string): string => lang.replace('_', '-').toLowerCase();

/**
 * The best of `voices` for `language`: the one named `name` (the agent's) if it speaks that
 * language; then a voice for the exact tag before one for the language alone (`en-GB` for
 * `en-US`), a natural-sounding one (engines call them Natural, Neural, Enhanced or Premium)
 * before a plain one, and the browser's default before the rest. None if no voice speaks it.
 */
export function voiceFor(
  voices: SpeechSynthesisVoice[],
  language: string,
  name: string | undefined,
): SpeechSynthesisVoice | undefined {
  const wanted = tagOf(language);
  const score = (v: SpeechSynthesisVoice) =>
    (v.name === name || v.voiceURI === name ? 8 : 0) +
    (tagOf(v.lang) === wanted ? 4 : 0) +
    (/natural|neural|enhanced|premium/i.test(v.name) ? 2 : 0) +
    (v.default ? 1 : 0);
  return voices
    .filter((v) => tagOf(v.lang).split('-')[0] === wanted.split('-')[0])
    .sort((a, b) => score(b) - score(a))[0];
}

const clamp = (value: number, min: number, max: number): number => Math.min(max, Math.max(min, value));
