import type { SpeechToText } from '../../config.js';
import type { EgressPolicy } from '../../shared/egress.js';
import { openAiCompatible } from './openai-compatible.js';
import { pocketsphinx } from './pocketsphinx.js';
import type { Recogniser } from './recogniser.js';

/** How long one recognition may take before its utterance is `speech_unavailable`. */
export const RECOGNITION_TIMEOUT_MS = 15_000;

/** The recogniser SPEECH_TO_TEXT / SPEECH_TO_TEXT_URL chose; a new engine is one file and one line here. */
export function recogniserFor(choice: SpeechToText | undefined, egress: EgressPolicy): Recogniser | undefined {
  if (!choice) return undefined;
  if (choice.engine === 'pocketsphinx') return pocketsphinx();
  return openAiCompatible(
    { url: choice.url, model: choice.model, key: choice.key, timeoutMs: RECOGNITION_TIMEOUT_MS },
    egress,
  );
}
