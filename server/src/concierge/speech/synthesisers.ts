import type { TextToSpeech } from '../../config.js';
import type { EgressPolicy } from '../../shared/egress.js';
import { espeakNg } from './espeak-ng.js';
import { openAiSpeech } from './openai-speech.js';
import type { Synthesiser } from './synthesiser.js';

/** How long one sentence may take, waiting for a place included, before it is `speech_unavailable`. */
export const SYNTHESIS_TIMEOUT_MS = 10_000;

/** The synthesiser TEXT_TO_SPEECH / TEXT_TO_SPEECH_URL chose; a new engine is one file and one line here. */
export function synthesiserFor(choice: TextToSpeech | undefined, egress: EgressPolicy): Synthesiser | undefined {
  if (!choice) return undefined;
  if (choice.engine === 'espeak-ng') return espeakNg();
  return openAiSpeech(
    { url: choice.url, model: choice.model, key: choice.key, timeoutMs: SYNTHESIS_TIMEOUT_MS },
    egress,
  );
}
