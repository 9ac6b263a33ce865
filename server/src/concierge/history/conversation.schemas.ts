import { guardrailOutcomes, guardrailRules } from '#protocol/guardrails';
import { keepModes } from '#protocol/privacy';
import { z } from 'zod';
import { analysisSchema } from '#protocol/conversation-analysis';
import { pageQuery } from '../../http/pagination.js';
import { timestamp } from '../../shared/schemas.js';
import { deliverySchema } from '../deliveries/delivery.schemas.js';
import {
  endReasons,
  feedbackRatings,
  handlers,
  recognitionEngines,
  replyAction,
  storedEvent,
  turnFailures,
  turnModes,
} from '#protocol/frames';
import { conversationStatuses, turnStatuses } from '../conversations/conversation.table.js';

export const conversationSchema = z
  .object({
    id: z.uuid(),
    deployment_id: z.uuid(),
    agent_id: z.uuid(),
    agent_version: z.number().int().nullable().meta({ description: 'The agent version the conversation started with' }),
    status: z.enum(conversationStatuses),
    end_reason: z.enum(endReasons).nullable(),
    user: z.object({ sub: z.string(), name: z.string().nullable() }),
    turn_count: z.number().int(),
    failed_turn_count: z.number().int().meta({ description: 'Turns failed or expired' }),
    handler: z
      .enum(handlers)
      .meta({ description: 'Who answers its turns: the turn hook (`agent`) or a person who took it over' }),
    handler_name: z.string().nullable().meta({ description: 'The name visitors see of the person handling it' }),
    needs_person: z
      .boolean()
      .meta({ description: 'The hook handed it over, or the visitor asked for a person, and nobody has taken it yet' }),
    handoff_reason: z
      .string()
      .nullable()
      .meta({ description: 'Why it needs a person: the hook\'s reason, or "The visitor asked for a person"' }),
    waiting_turns: z.number().int().meta({ description: 'Turns acknowledged and not yet answered' }),
    preview: z
      .boolean()
      .meta({ description: "Started by a preview token (the console's Try it): the inbox leaves it out" }),
    last_message: z
      .object({
        from: z.enum(['visitor', 'agent', 'person']),
        text: z.string().meta({ description: 'At most 140 characters, cut at a word with "…"' }),
      })
      .nullable()
      .meta({
        description: "The last thing said in it (a turn, a reply, a person's message); null before anything was",
      }),
    handoff_at: timestamp.nullable().meta({
      description:
        'When who handles it, or whether it needs a person, last changed: how long a request for a person has waited',
    }),
    last_activity_at: timestamp.meta({ description: 'When its last event was stored' }),
    created_at: timestamp,
    updated_at: timestamp,
    ended_at: timestamp.nullable(),
  })
  .meta({ id: 'Conversation' });
export type Conversation = z.infer<typeof conversationSchema>;

const turnSchema = z
  .object({
    id: z.uuid(),
    client_turn_id: z.string(),
    text: z.string(),
    words: z
      .object({
        kept: z.enum(keepModes),
        text_chars: z.number().int().nullable(),
        reply_chars: z.number().int().nullable(),
      })
      .meta({
        description:
          "How this turn's words were kept (README, Privacy: what is kept): `everything` as said, `redacted` with values replaced by their kind (`[phone]`), `metadata` not at all (its texts empty); and how many characters the visitor said and the reply held (null for turns stored before they were counted, or a reply not yet come)",
      }),
    mode: z.enum(turnModes),
    language: z.string().nullable().meta({
      description:
        "The visitor's language for this turn (BCP 47): their choice in the widget's language menu, else the agent's; null for turns taken before languages were recorded",
    }),
    status: z.enum(turnStatuses),
    failure_reason: z.enum(turnFailures).nullable(),
    reply_text: z.string().nullable().meta({ description: 'The final reply (what the parts were replaced with)' }),
    reply_actions: replyAction
      .array()
      .meta({ description: "The final reply's actions; empty when it had none, or has not come" }),
    parts: z.object({ part: z.number().int(), text: z.string(), received_at: timestamp }).array().meta({
      description:
        'The parts the reply was streamed in, in part order (README, Streaming a reply); empty when it came whole',
    }),
    first_part_at: timestamp.nullable().meta({ description: "When the reply's first part came" }),
    guardrails: z
      .object({
        rule: z.enum(guardrailRules),
        action: z.enum(guardrailOutcomes),
        detail: z.string().optional().meta({ description: 'The blocked term, or the custom criterion' }),
        sentence: z.string().optional().meta({
          description: 'The sentence stopped or flagged, as the deployment keeps words; the visitor never saw it',
        }),
      })
      .array()
      .meta({
        description:
          "What the agent's guardrails decided about the reply's sentences, in order (README, Variables and guardrails); empty when nothing was stopped or flagged",
      }),
    feedback: z
      .object({ rating: z.enum(feedbackRatings), comment: z.string().nullable(), at: timestamp })
      .nullable()
      .meta({
        description: "The visitor's last rating of the reply (README, Knowing how it goes); null when they gave none",
      }),
    recognition: z
      .object({ engine: z.enum(recognitionEngines), duration_ms: z.number().int(), audio_ms: z.number().int() })
      .nullable()
      .meta({
        description:
          "How the service heard a spoken turn (README, Voice in every browser): the recogniser, its time from the utterance's end to its answer, and the audio's length; null for typed turns and the browser's recognition",
      }),
    voice: z
      .object({
        speech_ms: z.number().int(),
        end_of_turn_ms: z.number().int(),
        recognition_ms: z.number().int(),
        first_audio_ms: z.number().int().nullable(),
      })
      .nullable()
      .meta({
        description:
          "A turn found in a hands-free visitor's open mic (README, Hands-free voice): how long they spoke, the quiet that ended their turn, the recogniser's time, and from the end of their speech to the first audio of the reply (null until it is sent, or when it was not spoken); null for other turns",
      }),
    heard: z.object({ text: z.string(), interrupted: z.boolean(), at: timestamp }).nullable().meta({
      description:
        "What the visitor heard of the spoken reply (README, The agent's own voice): the sentences played, the interrupted one cut at its last word heard, and when the widget last reported; null when it was not spoken",
    }),
    page: z.object({ url: z.string(), title: z.string() }).nullable().meta({
      description:
        'The page the visitor asked from (README, Greeting visitors first); null when the widget did not say',
    }),
    created_at: timestamp,
    acknowledged_at: timestamp.nullable(),
    resolved_at: timestamp.nullable(),
    replied_by: z
      .union([z.object({ type: z.literal('agent') }), z.object({ type: z.literal('person'), name: z.string() })])
      .nullable()
      .meta({
        description:
          'Who answered: the agent (the hook or its signed reply), or a person by name; null while unanswered',
      }),
    hook_attempts: deliverySchema.array().meta({ description: "Every call of this turn's hook, in attempt order" }),
    knowledge: z
      .array(
        z.object({
          chunk_id: z.uuid(),
          document_id: z.uuid(),
          title: z.string(),
          url: z.string().nullable(),
          score: z.number(),
        }),
      )
      .nullable()
      .meta({
        description:
          "The agent's knowledge base passages this turn was given, best first (README, Answers from your documents); null when the agent has no base",
      }),
    model_calls: deliverySchema.array().meta({
      description:
        "A model agent's calls for this turn, in the order they were sent: each call of the model (kind `model`) and of a tool (kind `tool`) (README, An agent without a server)",
    }),
    reply_received: z
      .object({
        at: timestamp,
        duplicates: z.number().int().meta({ description: 'Identical copies of the reply that followed it' }),
      })
      .nullable()
      .meta({
        description:
          'The deferred reply as received; null when none came, or when the reply came in the hook’s own answer',
      }),
  })
  .meta({ id: 'ConversationTurn' });
export type ConversationTurn = z.infer<typeof turnSchema>;

export const conversationDetailSchema = conversationSchema
  .extend({
    turns: turnSchema.array().meta({ description: 'Oldest first' }),
    events: storedEvent
      .array()
      .meta({ description: "The widget's stored events in seq order, exactly as the widget receives them" }),
    analysis: analysisSchema
      .nullable()
      .meta({ description: "The analysis the agent's spec asks for, once it has run (README, Tests and analysis)" }),
  })
  .meta({ id: 'ConversationDetail' });
export type ConversationDetail = z.infer<typeof conversationDetailSchema>;

/** `name:value` of a conversation's analysis (README, Tests and analysis), as a filter takes it. */
const analysisMatch = (pattern: RegExp, description: string) =>
  z
    .string()
    .regex(pattern, `must be name:value (${description.split(':')[0]!.replace(/`/g, '')})`)
    .transform((v) => ({ name: v.slice(0, v.indexOf(':')), value: v.slice(v.indexOf(':') + 1) }))
    .optional()
    .meta({ description });

const conversationFilter = z.object({
  deployment_id: z.uuid().optional(),
  agent_id: z.uuid().optional(),
  status: z.enum(conversationStatuses).optional(),
  user_sub: z.string().min(1).max(256).optional(),
  created_after: timestamp.optional().meta({ description: 'Only conversations created at or after this time' }),
  created_before: timestamp.optional().meta({ description: 'Only conversations created before this time' }),
  handler: z.enum(handlers).optional(),
  needs_person: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .meta({ description: '`true`: handed over by the hook and not yet taken (the inbox lists these first)' }),
  preview: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .meta({ description: "`false`: leave out conversations started by a preview token (the console's Try it)" }),
  search: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "Case-insensitive substring of any turn's text or reply" }),
  has_failures: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .meta({ description: '`true`: at least one failed or expired turn, or a dead transcript event; `false`: none' }),
  criterion: analysisMatch(
    /^[a-z][a-z0-9_]{0,39}:(success|failure|unknown)$/,
    '`booked_table:success`: the analysis found that criterion so',
  ),
  field: analysisMatch(/^[a-z][a-z0-9_]{0,39}:.{1,100}$/s, '`party_size:4`: the analysis gave that field this value'),
});
export type ConversationFilter = z.infer<typeof conversationFilter>;

export const listConversationsQuery = pageQuery.extend(conversationFilter.shape);
export const exportConversationsQuery = conversationFilter;
