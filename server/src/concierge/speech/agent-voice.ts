import type { AgentSpeech } from '../../agents/agent-speech.js';
import type { SpeechRequest } from './synthesiser.js';
import { pronounced } from '#protocol/pronunciations';

const base = (tag: string) => tag.split('-')[0]!.toLowerCase();

/**
 * How the service's voice says `text` in `language` for an agent whose own language is
 * `agentLanguage`: the voice `by_language` names for that language (the exact tag first), else the
 * agent's voice when the language is the agent's, else the engine's own voice for the language;
 * the agent's pace; its pronunciations applied to what is said.
 */
export function speechRequestFor(
  text: string,
  language: string,
  speech: AgentSpeech,
  agentLanguage: string,
): SpeechRequest {
  const byLanguage = Object.entries(speech.service?.by_language ?? {});
  const voice =
    byLanguage.find(([key]) => key.toLowerCase() === language.toLowerCase())?.[1] ??
    byLanguage.find(([key]) => base(key) === base(language))?.[1] ??
    (base(language) === base(agentLanguage) ? speech.service?.voice : undefined);
  return {
    text: pronounced(text, speech.pronunciations, language),
    voice,
    speed: speech.service?.speed ?? 1,
    language,
  };
}
