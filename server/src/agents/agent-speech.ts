import { z } from 'zod';
import { pronunciation } from '#protocol/frames';
import { type TurnTaking, turnTakingOf } from './agent-turn-taking.js';

/** At most this many pronunciations per agent. */
export const MAX_PRONUNCIATIONS = 200;

const voiceId = z.string().trim().min(1).max(100);
/** A language the by-language voices are keyed by: `de`, or `pt-BR`. */
const languageKey = z.string().regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'must be a language such as de or pt-BR');

/** The synthesiser's voice (README, The agent's own voice): its id, pace, and other voices for other languages. */
export const serviceVoice = z.strictObject({
  voice: voiceId,
  speed: z.number().min(0.5, 'must be from 0.5 to 2').max(2, 'must be from 0.5 to 2').optional(),
  by_language: z.record(languageKey, voiceId).optional(),
});
export type ServiceVoice = z.infer<typeof serviceVoice>;

/** How an agent sounds on the service's synthesiser: its voice, and how it says words (README, The agent's own voice). */
export interface AgentSpeech {
  service: ServiceVoice | undefined;
  pronunciations: z.infer<typeof pronunciation>[];
  /** How it takes turns with a hands-free visitor (README, Hands-free voice). */
  turnTaking: TurnTaking;
}

/** The spec's speech as the service uses it: whatever does not read as documented is left out, never guessed. */
export function speechOf(spec: Record<string, unknown>): AgentSpeech {
  const voice = spec.voice as Record<string, unknown> | undefined;
  const service = serviceVoice.safeParse(typeof voice === 'object' && voice ? voice.service : undefined);
  const sayings = pronunciation.array().max(MAX_PRONUNCIATIONS).safeParse(spec.pronunciations);
  return {
    service: service.success ? service.data : undefined,
    pronunciations: sayings.success ? sayings.data : [],
    turnTaking: turnTakingOf(voice),
  };
}
