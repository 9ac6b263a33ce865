import { z } from 'zod';
import { AppError } from '../errors.js';
import { languageTag, pronunciation } from '#protocol/frames';
import { inLanguages } from '#protocol/text';
import { responderSpec } from './agent-responder.js';
import { MAX_PRONUNCIATIONS, serviceVoice } from './agent-speech.js';
import { turnTakingFields } from './agent-turn-taking.js';
import { qualityFields } from './agent-quality.js';
import { guardrailsSpec } from './agent-guardrails.js';
import { variableProblems } from './agent-variables.js';

const prompt = z
  .union([z.string(), z.array(z.string()), z.record(z.string(), z.string())])
  .meta({ description: 'Text, a list of lines, or named sections: told to the model as text' });

/**
 * The keys of an agent's spec the service reads (README, The agent's spec), as the served OpenAPI
 * describes them. A spec is otherwise the customer's: other keys are kept as sent. A draft is
 * saved as given; publishing checks these keys and refuses, naming each field, what it could not use.
 */
export const agentSpecDocument = z
  .looseObject({
    greeting: inLanguages(z.string()).optional().meta({
      description:
        "The agent's first words, the widget's welcome line: one text, or one per language tag (the conversation's language, else English, else the first)",
    }),
    language: languageTag.optional().meta({ description: 'BCP 47; default en-US' }),
    persona: prompt.optional(),
    instructions: prompt.optional(),
    voice: z
      .union([
        z.string(),
        z.looseObject({
          name: z.string().optional().meta({ description: "The browser's voice, by name" }),
          rate: z.number().min(0.1).max(10).optional(),
          pitch: z.number().min(0).max(2).optional(),
          service: serviceVoice.optional().meta({ description: "The service's voice (README, The agent's own voice)" }),
          ...turnTakingFields,
        }),
      ])
      .optional(),
    pronunciations: pronunciation
      .array()
      .max(MAX_PRONUNCIATIONS, `must have at most ${MAX_PRONUNCIATIONS} entries`)
      .optional(),
    responder: responderSpec
      .optional()
      .meta({ description: 'Who answers: the hook (default), a model, or the knowledge base' }),
    guardrails: guardrailsSpec
      .optional()
      .meta({ description: "What a model agent's replies may not say (README, Variables and guardrails)" }),
    ...qualityFields,
  })
  .meta({ id: 'AgentSpecDocument' });

/** Where a spec field of the Agent points in the served document. */
export const AGENT_SPEC_REF = { $ref: '#/components/schemas/AgentSpecDocument' };

/**
 * Refuses a draft the service could not use as it reads it (its greeting, language, voice,
 * pronunciations, responder, guardrails or a variable it cannot fill), naming each field and why;
 * nothing is published.
 */
export function checkPublishable(spec: unknown): void {
  const parsed = agentSpecDocument.safeParse(spec ?? {});
  const issues = parsed.success
    ? variableProblems(parsed.data)
    : parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message }));
  if (!issues.length) return;
  const fields = [...new Set(issues.map((issue) => issue.path[0] ?? 'spec'))];
  throw new AppError(
    'invalid_request',
    `The draft's ${fields.join(' and ')} cannot be used; nothing was published`,
    issues.map((issue) => ({ path: ['draft_spec', ...issue.path].join('.'), message: issue.message })),
  );
}
