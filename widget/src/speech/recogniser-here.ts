/** The browser's own speech recogniser, a constructor; undefined where the browser has none. */
export type RecognitionConstructor = new () => Recognition;

export interface Recognition {
  lang: string;
  interimResults: boolean;
  continuous: boolean;
  onresult: ((event: { resultIndex: number; results: RecognitionResultList }) => void) | null;
  onend: (() => void) | null;
  onerror: ((event: { error: string }) => void) | null;
  start(): void;
  stop(): void;
}

interface RecognitionResultList {
  length: number;
  [index: number]: { isFinal: boolean; 0: { transcript: string } };
}

/**
 * Where the browser recognises speech itself: `hello` says so on every page, while the rest of
 * the browser's speech (speech.ts) comes with the panel or the first sentence said.
 */
export function recogniserIn(win: Window): RecognitionConstructor | undefined {
  const w = win as unknown as {
    SpeechRecognition?: RecognitionConstructor;
    webkitSpeechRecognition?: RecognitionConstructor;
  };
  return w.SpeechRecognition ?? w.webkitSpeechRecognition;
}
