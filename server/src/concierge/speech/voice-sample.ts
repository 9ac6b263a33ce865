import { z } from 'zod';
import { findAgent } from '../../agents/agent.repository.js';
import { MAX_PRONUNCIATIONS, serviceVoice, speechOf } from '../../agents/agent-speech.js';
import type { Db } from '../../database.js';
import { AppError, notFound } from '../../errors.js';
import { fromJsonColumn } from '../../shared/json-column.js';
import { agentInfo, greetingIn } from '../../deployments/deployment-context.js';
import { renderTemplate } from '#protocol/templates';
import { speechRequestFor } from './agent-voice.js';
import { wavOf } from './recogniser.js';
import type { SpeechSynthesis } from './speech-synthesis.js';
import { languageTag, pronunciation } from '#protocol/frames';

export const voiceSampleBody = z
  .strictObject({
    text: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .optional()
      .meta({ description: "What to say; default: the agent's greeting" }),
    language: languageTag.optional().meta({ description: "Default: the agent's language" }),
    voice: serviceVoice.optional().meta({
      description: "A voice to try instead of the spec's `voice.service` (the draft's, else the published one's)",
    }),
    pronunciations: pronunciation
      .array()
      .max(MAX_PRONUNCIATIONS)
      .optional()
      .meta({ description: "Pronunciations to try instead of the spec's" }),
  })
  .meta({ id: 'VoiceSample' });
export type VoiceSampleInput = z.infer<typeof voiceSampleBody>;

/**
 * A sentence in an agent's voice on this service's synthesiser, as a WAV file for the console to
 * play (README, The agent's own voice): the draft spec's voice and pronunciations (else the
 * published one's), or those being tried. Nothing is stored.
 */
export async function voiceSample(
  parts: { db: Db; synthesis: SpeechSynthesis },
  customerId: string,
  agentId: string,
  input: VoiceSampleInput,
): Promise<Buffer> {
  const { db, synthesis } = parts;
  const agent = await findAgent(db, customerId, agentId);
  if (!agent) throw notFound('Agent');
  if (!synthesis.engine)
    throw new AppError(
      'invalid_state',
      "This service has no voice of its own: its operator sets TEXT_TO_SPEECH=espeak-ng or TEXT_TO_SPEECH_URL; until then replies are spoken in the browser's voice",
    );
  const specText = agent.draft_spec ?? agent.agent_spec;
  const info = agentInfo(agent.name, specText);
  const speech = speechOf(fromJsonColumn<Record<string, unknown>>(specText) ?? {});
  // A sample has no conversation: its variables say their defaults (README, Variables and guardrails).
  const text = renderTemplate(
    input.text ?? greetingIn(info, input.language) ?? `Hello, I'm ${agent.name}. How can I help you today?`,
    () => undefined,
  );
  const request = speechRequestFor(
    text,
    input.language ?? info.language,
    { service: input.voice ?? speech.service, pronunciations: input.pronunciations ?? speech.pronunciations },
    info.language,
  );
  const chunks: Buffer[] = [];
  const said = await synthesis.say(request, (pcm) => chunks.push(pcm), new AbortController().signal);
  if (!said)
    throw new AppError(
      'unavailable',
      'The synthesiser could not say it right now (the service log says why); try again shortly',
    );
  return wavOf({ pcm: Buffer.concat(chunks), sampleRate: synthesis.sampleRate });
}
