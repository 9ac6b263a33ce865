import { z } from 'zod';
import { analysisSchema } from '#protocol/conversation-analysis';
import { timestamp } from '../shared/schemas.js';
import {
  endReasons,
  feedbackRatings,
  handlers,
  replyAction,
  replyActions,
  turnFailures,
  turnModes,
} from '#protocol/frames';
import { transcriptEventTypes, type TranscriptEventType } from '#protocol/transcript-events';

/**
 * What the service sends to the customer's server (README, Writing your customer server): the bodies the code
 * builds, typed from here and checked against here by the tests, and the OpenAPI `webhooks`
 * section generated from here.
 */

const test = z
  .literal(true)
  .optional()
  .meta({ description: 'Only on samples sent by `POST /api/v1/deployments/{id}/test-hook`; their ids match nothing' });

export const turnCreatedBody = z
  .strictObject({
    type: z.literal('turn.created'),
    delivery_id: z.uuid().meta({
      description:
        'The same on every retry of this turn: deduplicate on it (also in `X-Service-Delivery` and `webhook-id`)',
    }),
    sent_at: timestamp.meta({ description: 'When this attempt was signed: refuse stale replays' }),
    test,
    deployment_id: z.uuid(),
    agent_id: z.uuid(),
    conversation_id: z.uuid(),
    turn_id: z.uuid(),
    user: z.strictObject({
      sub: z.string().meta({ description: "The user token's `sub`" }),
      name: z.string().nullable().meta({ description: "The user token's `name`, if it had one" }),
      ctx: z.unknown().meta({ description: "The user token's `ctx` claim as your server put it there, or null" }),
    }),
    text: z.string().meta({ description: 'What the visitor said (a voice turn arrives transcribed)' }),
    mode: z.enum(turnModes),
    language: z.string().meta({
      description:
        "The visitor's language (BCP 47): their choice in the widget's language menu, else the agent's `language`. Answer in it",
    }),
    reply_url: z.url().meta({
      description:
        'Where to POST the deferred reply, signed: `{conversation_id, turn_id, reply_text, actions?}`, or its parts first: `{conversation_id, turn_id, part, text}`',
    }),
    knowledge: z
      .array(
        z.strictObject({
          chunk_id: z.uuid(),
          document_id: z.uuid(),
          title: z.string(),
          url: z.string().nullable().meta({ description: "The passage's section, for a citation" }),
          text: z.string(),
          score: z.number().meta({ description: 'Higher is better; comparable within this list only' }),
        }),
      )
      .optional()
      .meta({
        id: 'KnowledgePassages',
        description:
          "When the agent has a knowledge base (README, Answers from your documents): its passages that best match the visitor's words, best first, at most 5 (empty when none matches)",
      }),
    page: z
      .strictObject({
        url: z
          .string()
          .nullable()
          .meta({ description: 'The page the visitor asked from; null when the widget did not say' }),
        title: z.string().nullable(),
        context: z.unknown().meta({ description: 'What the page last gave `Concierge.setContext(obj)`, or null' }),
        events: z.strictObject({ name: z.string(), data: z.json().optional(), at: timestamp }).array().meta({
          description:
            "The page's `Concierge.trigger(name, data)` calls since the visitor's turn before, oldest first, at most 20",
        }),
      })
      .meta({
        id: 'TurnPage',
        description:
          'Where the visitor is (README, Greeting visitors first): the page, its context, what happened on it',
      }),
    previous_reply: z
      .strictObject({
        turn_id: z.uuid(),
        heard_text: z
          .string()
          .meta({ description: 'The sentences the visitor heard, the interrupted one cut at its last word heard' }),
        interrupted: z.boolean(),
      })
      .optional()
      .meta({
        id: 'PreviousReply',
        description:
          "What the visitor heard of the reply before this turn, when it was spoken (README, The agent's own voice): answer as if only that was said",
      }),
  })
  .meta({ id: 'TurnCreatedHook' });

/** A model agent's call of one of its tools (README, An agent without a server): POSTed to the tool's `url`, signed like the turn hook. */
const toolCallFields = z.strictObject({
  type: z.literal('tool.call'),
  call_id: z.uuid().meta({ description: 'This call (also in `X-Service-Delivery` and `webhook-id`): it is sent once' }),
  sent_at: timestamp.meta({ description: 'When it was signed: refuse stale replays' }),
  deployment_id: z.uuid(),
  conversation_id: z.uuid(),
  turn_id: z.uuid(),
  user: z
    .strictObject({
      sub: z.string().meta({ description: "The user token's `sub`: whom to authorise the call for" }),
      name: z.string().nullable().meta({ description: "The user token's `name`, if it had one" }),
      ctx: z.unknown().meta({ description: "The user token's `ctx` claim as your server put it there, or null" }),
    })
    .meta({
      description:
        "The visitor the call is made for, as your server vouched for them in the user token. The arguments are the model's, which the visitor's words steer: authorise what the call does against this visitor, never against the arguments alone",
    }),
  tool: z.string().meta({ description: "The tool's `name` in the agent's spec" }),
  arguments: z.record(z.string(), z.unknown()).meta({
    description:
      "The model's arguments, already checked against the tool's `parameters` JSON Schema; written by a model that read the visitor's words: check them as you would a visitor's input",
  }),
});
export const toolCallBody = toolCallFields
  // The tool's own `body` fields, their variables filled in (README, Variables and guardrails).
  .catchall(z.unknown())
  .meta({
    id: 'ToolCallHook',
    description:
      "Besides these fields, each field of the tool's `body` in the agent's spec, its strings' {{variables}} filled in as strings",
  });
export type ToolCallBody = z.infer<typeof toolCallFields>;

/** The hook handing the conversation to a person (README, A person in the conversation). */
export const hookHandoff = z.strictObject({ reason: z.string().min(1).max(200) }).meta({
  id: 'HookHandoff',
  description: 'Marks the conversation `needs_person`; the agent keeps handling it until someone takes over',
});

export const hookAnswerBody = z
  .object({
    reply_text: z
      .string()
      .min(1)
      .max(10_000)
      .optional()
      .meta({ description: 'Resolves the turn at once; without it (a handoff alone) the turn is only acknowledged' }),
    actions: replyActions.optional().meta({
      description:
        'At most 6; invalid ones fail the turn (`hook_rejected`) and the attempt is recorded with `error: "invalid_answer"`',
    }),
    handoff: hookHandoff.optional(),
  })
  .meta({
    id: 'HookAnswer',
    description:
      'Optional. With a 2xx, the turn is acknowledged and resolved at once with this text and actions; any other 2xx only acknowledges it',
  });

const turnId = z.uuid();

/** Each transcript event's `data`, by type. */
const transcriptData: Record<TranscriptEventType, z.ZodType> = {
  'conversation.started': z.strictObject({
    user: z.strictObject({ sub: z.string(), name: z.string().nullable() }),
    call_direction: z.enum(['inbound', 'outbound']),
  }),
  'turn.created': z.strictObject({
    turn_id: turnId,
    client_turn_id: z.string(),
    text: z.string(),
    mode: z.enum(turnModes),
    language: z.string().meta({ description: "The visitor's language (BCP 47)" }),
  }),
  'turn.acknowledged': z.strictObject({ turn_id: turnId }),
  'turn.resolved': z.strictObject({
    turn_id: turnId,
    reply_text: z.string(),
    actions: replyAction.array(),
    replied_by: z.union([
      z.strictObject({ type: z.literal('agent') }),
      z.strictObject({ type: z.literal('person'), name: z.string() }),
    ]),
  }),
  'turn.failed': z.strictObject({ turn_id: turnId, reason: z.enum(turnFailures) }),
  'turn.rated': z.strictObject({
    turn_id: turnId,
    rating: z.enum(feedbackRatings),
    comment: z.string().nullable().meta({ description: 'What the visitor wrote with it, if anything' }),
  }),
  'turn.interrupted': z.strictObject({
    turn_id: turnId,
    heard_text: z.string().meta({ description: 'What the visitor heard of the reply before cutting it off' }),
  }),
  'conversation.handoff': z.strictObject({
    handler: z.enum(handlers),
    name: z.string().nullable().meta({ description: "The person's name; null when the agent handles it" }),
    needs_person: z.boolean(),
    reason: z.string().nullable().meta({ description: "The hook's reason, when it handed over" }),
  }),
  'message.created': z.strictObject({ text: z.string(), actions: replyAction.array(), name: z.string() }),
  'conversation.ended': z.strictObject({ reason: z.enum(endReasons) }),
  'conversation.analyzed': analysisSchema.meta({
    description: "The conversation's analysis (README, Tests and analysis), sent once when it has run",
  }),
  'page.event': z.strictObject({
    name: z
      .string()
      .meta({ description: 'As the page called `Concierge.trigger(name, data)` (README, Greeting visitors first)' }),
    data: z.json().optional().meta({ description: 'Its data, when it gave any (at most 4 KiB as JSON)' }),
  }),
};

const eventName = (type: TranscriptEventType) =>
  `Transcript${type
    .split(/[._]/)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}`;

function transcriptEventBody(type: TranscriptEventType) {
  return z
    .strictObject({
      id: z
        .string()
        .regex(/^evt_[0-9A-Za-z]+$/)
        .meta({
          description:
            'The same on every retry and redelivery: deduplicate on it (also in `X-Service-Event-Id` and `webhook-id`)',
        }),
      type: z.literal(type),
      created_at: timestamp,
      deployment_id: z.uuid(),
      conversation_id: z.uuid(),
      test,
      data: transcriptData[type],
    })
    .meta({ id: eventName(type) });
}

export const transcriptEventBodies = Object.fromEntries(
  transcriptEventTypes.map((type) => [type, transcriptEventBody(type)]),
) as Record<TranscriptEventType, ReturnType<typeof transcriptEventBody>>;

/** The headers every outbound call carries, beside the one naming what it is about. */
export const signatureHeaders = {
  'X-Service-Signature':
    'sha256=<lowercase hex HMAC-SHA256 of the exact body bytes>, keyed with the UTF-8 bytes of the signing secret (whsec_ prefix included)',
  'webhook-id': 'Standard Webhooks: the delivery id (turn hook) or event id (transcript)',
  'webhook-timestamp': 'Standard Webhooks: Unix seconds at sending',
  'webhook-signature':
    'Standard Webhooks: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"> keyed with the base64 decoding of the secret after whsec_; two, space-separated, while a rotated secret is in its grace period',
} as const;
