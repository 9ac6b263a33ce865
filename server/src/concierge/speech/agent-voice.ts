import type { AgentSpeech } from '../../agents/agent-speech.js';
import type { SpeechRequest } from './synthesiser.js';
import { pronounced } from '#protocol/pronunciations';

const base = (tag: string) => tag.split('-')[0]!.toLowerCase();

/**
 * Characters of one sentence said, at most, its pronunciations applied (about a minute of speech):
 * two hundred pronunciations could otherwise make a short sentence thousands of characters long.
 * A sentence past it is said up to there, and shown whole.
 */
export const SPOKEN_CHARS = 1_000;

/**
 * How the service's voice says `text` in `language` for an agent whose own language is
 * `agentLanguage`: the voice `by_language` names for that language (the exact tag first), else the
 * agent's voice when the language is the agent's, else the engine's own voice for the language;
 * the agent's pace; its pronunciations applied to what is said.
 */
export function speechRequestFor(
  text: string,
  language: string,
  speech: Pick<AgentSpeech, 'service' | 'pronunciations'>,
  agentLanguage: string,
): SpeechRequest {
  const byLanguage = Object.entries(speech.service?.by_language ?? {});
  const voice =
    byLanguage.find(([key]) => key.toLowerCase() === language.toLowerCase())?.[1] ??
    byLanguage.find(([key]) => base(key) === base(language))?.[1] ??
    (base(language) === base(agentLanguage) ? speech.service?.voice : undefined);
  const said = pronounced(text, speech.pronunciations, language);
  return {
    text: said.length > SPOKEN_CHARS ? said.slice(0, SPOKEN_CHARS) : said,
    voice,
    speed: speech.service?.speed ?? 1,
    language,
  };
}
