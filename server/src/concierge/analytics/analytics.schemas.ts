import { type GuardrailOutcome, guardrailOutcomes } from '#protocol/guardrails';
import { type RedactionKind, redactionKinds } from '#protocol/privacy';
import { z } from 'zod';
import { timestamp } from '../../shared/schemas.js';

export const intervals = ['hour', 'day'] as const;
export type Interval = (typeof intervals)[number];

const HOUR_MS = 3_600_000;
export const INTERVAL_MS: Record<Interval, number> = { hour: HOUR_MS, day: 24 * HOUR_MS };
/** The longest range one request may ask for. */
export const MAX_DAYS = 92;

/** A UTC instant, as a date (`2026-11-01`, its midnight) or a date and time. */
const instant = z
  .union([z.iso.date(), z.iso.datetime()])
  .transform((text) => new Date(text.length === 10 ? `${text}T00:00:00.000Z` : text).toISOString())
  .meta({
    description: 'A UTC date (its midnight) or date and time, at the start of an interval',
    example: '2026-11-01',
  });

export const analyticsQuery = z
  .strictObject({
    from: instant.meta({ description: 'Inclusive' }),
    to: instant.meta({ description: 'Exclusive' }),
    interval: z.enum(intervals).default('day'),
    deployment_id: z.uuid().optional(),
    agent_id: z.uuid().optional(),
  })
  .superRefine((q, ctx) => {
    const step = INTERVAL_MS[q.interval];
    for (const key of ['from', 'to'] as const) {
      if (Date.parse(q[key]) % step)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `must be at the start of ${q.interval === 'day' ? 'a day' : 'an hour'} (UTC) for interval=${q.interval}`,
        });
    }
    const span = Date.parse(q.to) - Date.parse(q.from);
    if (span <= 0) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
    else if (span > MAX_DAYS * INTERVAL_MS.day)
      ctx.addIssue({ code: 'custom', path: ['to'], message: `must be at most ${MAX_DAYS} days after from` });
  });
export type AnalyticsQuery = z.output<typeof analyticsQuery>;

const percentiles = z
  .object({ p50: z.number().int().nullable(), p95: z.number().int().nullable(), count: z.number().int() })
  .meta({ id: 'LatencyPercentiles', description: 'In ms, within 5% (null without any measurement)' });

const counts = {
  conversations: z.number().int(),
  visitors: z.number().int().meta({ description: 'Distinct user token `sub`s' }),
  turns: z.number().int(),
  turns_failed: z.object({
    hook_rejected: z.number().int(),
    hook_failed: z.number().int(),
    reply_timeout: z.number().int(),
    conversation_ended: z.number().int(),
    model_failed: z
      .number()
      .int()
      .meta({ description: "The agent's model gave no answer (README, An agent without a server)" }),
  }),
  handoffs: z.number().int().meta({ description: "Takeovers by a person and the hook's handoff answers" }),
  feedback_up: z.number().int(),
  feedback_down: z.number().int(),
  redactions: z
    .object(
      Object.fromEntries(redactionKinds.map((kind) => [kind, z.number().int()])) as Record<RedactionKind, z.ZodNumber>,
    )
    .meta({
      description:
        'Values taken out of what was said before it was stored, by kind (README, Privacy: what is kept): deployments keeping `redacted` words',
    }),
  guardrails: z
    .object(
      Object.fromEntries(guardrailOutcomes.map((outcome) => [outcome, z.number().int()])) as Record<
        GuardrailOutcome,
        z.ZodNumber
      >,
    )
    .meta({
      description:
        "What model agents' guardrails did with sentences of their replies (README, Variables and guardrails): replaced by the refusal, written again, handed to a person, or let through flagged (not judged in time)",
    }),
  hook_latency_ms: percentiles,
  time_to_reply_ms: percentiles.meta({ description: 'From a turn taken to its reply' }),
  time_to_first_part_ms: percentiles.meta({ description: "From a turn taken to its reply's first part" }),
  recognition_ms: percentiles.meta({
    description:
      "The service's speech recogniser, from an utterance's end to its text (README, Voice in every browser)",
  }),
  voice_to_voice_ms: percentiles.meta({
    description:
      "Hands-free turns: from the end of the visitor's speech to the first audio of the agent's reply (README, Hands-free voice)",
  }),
};

const proactiveFigures = z
  .object({
    deployment_id: z.uuid(),
    rule_id: z.string(),
    shown: z
      .number()
      .int()
      .meta({ description: 'Teasers shown (a rule that opens the panel counts as shown and opened)' }),
    opened: z.number().int().meta({ description: 'Conversations opened from the teaser, or by the rule itself' }),
    conversations: z
      .number()
      .int()
      .meta({ description: "Conversations whose visitor's first turn came after the rule approached them" }),
    turns: z.number().int().meta({ description: 'Turns of those conversations' }),
  })
  .array()
  .meta({
    id: 'ProactiveFigures',
    description:
      "Each greeting rule's figures (README, Greeting visitors first), by deployment and rule id; rules with none are left out",
  });

const criterionFigures = z
  .object({
    agent_id: z.uuid(),
    agent_version: z.number().int().nullable(),
    criterion: z.string(),
    success: z.number().int(),
    failure: z.number().int(),
    unknown: z.number().int(),
    success_rate: z
      .number()
      .nullable()
      .meta({ description: 'success / (success + failure), 0 to 1; null when none could tell' }),
  })
  .array()
  .meta({
    id: 'CriterionFigures',
    description:
      "Each analysis criterion's results (README, Tests and analysis), by agent and version, over the conversations analysed in the window: versions side by side",
  });

export const analyticsSchema = z
  .object({
    interval: z.enum(intervals),
    from: timestamp,
    to: timestamp,
    buckets: z.object({ start: timestamp, ...counts, proactive: proactiveFigures }).array(),
    totals: z.object({ ...counts, proactive: proactiveFigures }),
    criteria: criterionFigures,
  })
  .meta({ id: 'Analytics' });
export type Analytics = z.infer<typeof analyticsSchema>;
