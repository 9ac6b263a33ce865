import type { AgentVoice } from '../session/protocol';

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
  listen(language: string | undefined, onInterim: (text: string) => void): Promise<string>;
  stopListening(): void;
  /** Queues `text` after whatever is being said, in the agent's voice: its name, rate and pitch. */
  speak(text: string, language: string | undefined, voice: AgentVoice | undefined): void;
  /** Barge-in: stops whatever is being said, and what waits to be. */
  silence(): void;
}

interface RecognitionResultList {
  length: number;
  [index: number]: { isFinal: boolean; 0: { transcript: string } };
}

interface Recognition {
  lang: string;
  interimResults: boolean;
  continuous: boolean;
  onresult: ((event: { resultIndex: number; results: RecognitionResultList }) => void) | null;
  onend: (() => void) | null;
  onerror: ((event: { error: string }) => void) | null;
  start(): void;
  stop(): void;
}

type RecognitionConstructor = new () => Recognition;

export function browserSpeech(win: Window = window): Speech {
  const w = win as unknown as { SpeechRecognition?: RecognitionConstructor; webkitSpeechRecognition?: RecognitionConstructor };
  const Recognizer = w.SpeechRecognition ?? w.webkitSpeechRecognition;
  const synth = win.speechSynthesis as SpeechSynthesis | undefined;
  let active: Recognition | undefined;
  return {
    canListen: Boolean(Recognizer),
    listen(language, onInterim) {
      return new Promise((resolve, reject) => {
        if (!Recognizer) return reject(new ListenError('unavailable'));
        const recognition = new Recognizer();
        active = recognition;
        recognition.lang = language ?? win.navigator.language;
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
        recognition.onerror = (event) => (event.error === 'no-speech' || event.error === 'aborted' ? resolve('') : reject(new ListenError(event.error)));
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
    speak(text, language, voice) {
      if (!synth) return;
      const utterance = new SpeechSynthesisUtterance(text);
      if (language) utterance.lang = language;
      const name = voice?.name;
      const chosen = name ? synth.getVoices().find((v) => v.name === name || v.voiceURI === name) : undefined;
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

const clamp = (value: number, min: number, max: number): number => Math.min(max, Math.max(min, value));
