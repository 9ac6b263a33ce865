import { z } from 'zod';
import { inLanguages } from '#protocol/text';

const ms = (min: number, max: number) =>
  z.number().int().min(min, `must be from ${min} to ${max}`).max(max, `must be from ${min} to ${max}`);
const seconds = (max: number) =>
  z.number().int().min(0, `must be from 0 to ${max}`).max(max, `must be from 0 to ${max}`);

/** How long the visitor's quiet ends their turn (README, Hands-free voice). */
const endOfTurn = z
  .strictObject({
    silence_ms: ms(200, 5_000).default(600),
    max_silence_ms: ms(200, 10_000).default(2_000),
    eagerness: z.enum(['eager', 'normal', 'patient']).default('normal'),
  })
  .refine((e) => e.max_silence_ms >= e.silence_ms, {
    message: 'max_silence_ms must be at least silence_ms',
    path: ['max_silence_ms'],
  });

/** What speech over the agent's voice stops it (README, Hands-free voice). */
const interruption = z.strictObject({
  min_speech_ms: ms(100, 3_000).default(300),
  ignore: z.array(z.string().trim().min(1).max(40)).max(50).optional().meta({
    description:
      "Words said over the agent that do not stop it; absent: the conversation language's (mm-hm, uh-huh, yeah, okay, ...)",
  }),
  resume_after_ms: ms(200, 5_000).default(1_000),
});

/**
 * The turn-taking fields of an agent spec's `voice` (README, Hands-free voice), each with its
 * default: checked on publish like the rest of the spec.
 */
export const turnTakingFields = {
  end_of_turn: endOfTurn.optional(),
  interruption: interruption.optional(),
  reengage_after_s: seconds(600).optional().meta({
    default: 10,
    description: 'Quiet after the agent spoke before it asks once if the visitor is still there; 0: never',
  }),
  reengage_text: inLanguages(z.string().trim().min(1).max(200)).optional().meta({
    description:
      'What it asks: one text, or one per language tag; absent: "Are you still there?" in the conversation\'s language',
  }),
  close_after_s: seconds(600)
    .optional()
    .meta({ default: 20, description: 'Quiet after that before the mic closes (`listening_stopped`); 0: never' }),
};

const turnTaking = z.object({
  end_of_turn: endOfTurn.default({ silence_ms: 600, max_silence_ms: 2_000, eagerness: 'normal' }),
  interruption: interruption.default({ min_speech_ms: 300, resume_after_ms: 1_000 }),
  reengage_after_s: turnTakingFields.reengage_after_s.unwrap().default(10),
  reengage_text: turnTakingFields.reengage_text,
  close_after_s: turnTakingFields.close_after_s.unwrap().default(20),
});
export type TurnTaking = z.infer<typeof turnTaking>;
export type EndOfTurn = TurnTaking['end_of_turn'];

export const TURN_TAKING_DEFAULTS: TurnTaking = turnTaking.parse({});

/** The spec's turn-taking as the service uses it: a field that does not read as documented takes its default. */
export function turnTakingOf(voice: unknown): TurnTaking {
  const given = typeof voice === 'object' && voice !== null ? (voice as Record<string, unknown>) : {};
  const field = <K extends keyof TurnTaking>(key: K): TurnTaking[K] => {
    const parsed = turnTaking.shape[key].safeParse(given[key]);
    return parsed.success ? (parsed.data as TurnTaking[K]) : TURN_TAKING_DEFAULTS[key];
  };
  return {
    end_of_turn: field('end_of_turn'),
    interruption: field('interruption'),
    reengage_after_s: field('reengage_after_s'),
    reengage_text: field('reengage_text'),
    close_after_s: field('close_after_s'),
  };
}
