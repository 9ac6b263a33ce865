import type { Config } from '../../config.js';
import type { Logger } from 'pino';
import { type EgressPolicy, egressFor } from '../../shared/egress.js';
import type { Parts } from '../../shared/parts.js';
import { recogniserFor } from './recognisers.js';
import { SPEECH_LIMITS, type SpeechLimits } from './speech-budget.js';
import { SpeechRecognition } from './speech-recognition.js';
import { SpeechSynthesis } from './speech-synthesis.js';
import { synthesiserFor } from './synthesisers.js';

/**
 * The service's ears and voice (README, Voice in every browser; The agent's own voice): the
 * recogniser and the synthesiser the operator configured (none, a local engine, or a speech
 * server reached through egress as `speech`), each with its places and deadline.
 */
export function openSpeech(
  parts: Parts,
  deps: { egress: EgressPolicy; logger: Logger },
  config: Pick<Config, 'speechToText' | 'speechConcurrency' | 'textToSpeech' | 'synthesisConcurrency'>,
  settings: {
    recognitionTimeoutMs?: number | undefined;
    synthesisTimeoutMs?: number | undefined;
    limits?: Partial<SpeechLimits> | undefined;
  },
): { speech: SpeechRecognition; synthesis: SpeechSynthesis } {
  const { egress, logger } = deps;
  const speech = new SpeechRecognition(
    { recogniser: recogniserFor(config.speechToText, egressFor(egress, 'speech')), logger },
    {
      concurrency: config.speechConcurrency,
      timeoutMs: settings.recognitionTimeoutMs,
      limits: { ...SPEECH_LIMITS, ...settings.limits },
    },
  );
  parts.add({ stop: async () => speech.close() });
  const synthesis = new SpeechSynthesis(
    { synthesiser: synthesiserFor(config.textToSpeech, egressFor(egress, 'speech')), logger },
    { concurrency: config.synthesisConcurrency, timeoutMs: settings.synthesisTimeoutMs },
  );
  parts.add({ stop: async () => synthesis.close() });
  return { speech, synthesis };
}
