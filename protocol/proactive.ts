import { z } from 'zod';
import { PAGE_DATA_BYTES, PAGE_EVENT_NAME, pathGlob } from './page-rules.js';
import { codePoints, inLanguages } from './text.js';

/**
 * Greeting visitors first, and what the page tells the agent (README, Greeting visitors first):
 * a deployment's `engagement_rules.proactive`, which the widget evaluates on every page, and the
 * page's events and context the widget sends over its socket.
 */

/** Rules one deployment may have. */
export const MAX_PROACTIVE_RULES = 20;

const jsonBytes = (value: unknown): number => new TextEncoder().encode(JSON.stringify(value) ?? '').length;
const withinPageBytes = <T extends z.ZodType>(schema: T) =>
  schema.refine((value) => jsonBytes(value) <= PAGE_DATA_BYTES, `must be at most ${PAGE_DATA_BYTES} bytes as JSON`);

/** A page event's name, as `Concierge.trigger(name)` and a rule's `when.event` give it. */
export const pageEventName = z.string().regex(PAGE_EVENT_NAME, 'must be 1 to 64 of A-Z, a-z, 0-9, _ . : -');

/** A page event's `data`: any JSON of at most 4 KiB. */
export const pageData = withinPageBytes(z.json());
export type PageData = z.infer<typeof pageData>;
/** The page's context (`Concierge.setContext`): an object of at most 4 KiB as JSON. */
export const pageContext = withinPageBytes(z.record(z.string(), z.json()));

/** The page a turn was taken on. */
export const pageOf = z.strictObject({ url: z.string().max(2000), title: z.string().max(300) });

/** One greeting rule: when all of `when` holds on a page, its teaser shows beside the launcher (or the panel opens). */
export const proactiveRule = z
  .strictObject({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'must be 1 to 40 of a-z, 0-9, _ and -, starting with a letter or digit'),
    when: z
      .strictObject({
        path: z
          .string()
          .refine((glob) => pathGlob(glob) !== undefined, {
            message: 'must be a path glob such as /rooms/* (starting with /, * within a segment, ** across segments)',
          })
          .optional()
          .meta({ description: 'The page path, whole: `*` any characters but `/`, `**` any characters' }),
        seconds_on_page: z
          .number()
          .int()
          .min(0)
          .max(3600)
          .optional()
          .meta({ description: 'Seconds the page was visible (a hidden tab does not count)' }),
        scroll_percent: z
          .number()
          .int()
          .min(1)
          .max(100)
          .optional()
          .meta({ description: 'How far down the page the visitor scrolled' }),
        exit_intent: z
          .literal(true)
          .optional()
          .meta({ description: 'The pointer leaves the top of the window (desktop browsers only)' }),
        event: pageEventName.optional().meta({ description: 'The page called `Concierge.trigger(event)`' }),
      })
      .refine((when) => Object.keys(when).length > 0, 'must hold at least one condition'),
    teaser: inLanguages(codePoints(1, 200)).meta({
      description: "The teaser's text, or one per language tag (the visitor's language, else English, else the first)",
    }),
    open: z.boolean().optional().meta({ description: 'Open the panel instead of showing the teaser; default false' }),
    once_per: z.enum(['visitor', 'session']).optional().meta({ description: 'Default `visitor`' }),
    max_per_day: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'Times one visitor may be approached by it a day' }),
  })
  .meta({ id: 'ProactiveRule' });
export type ProactiveRule = z.infer<typeof proactiveRule>;

export const proactiveRules = proactiveRule
  .array()
  .max(MAX_PROACTIVE_RULES, `must hold at most ${MAX_PROACTIVE_RULES} rules`)
  .refine((rules) => new Set(rules.map((r) => r.id)).size === rules.length, 'must not use a rule id twice');

/** What the widget reports of a rule, for its analytics. */
export const proactiveEvents = ['shown', 'opened'] as const;
export type ProactiveEvent = (typeof proactiveEvents)[number];
