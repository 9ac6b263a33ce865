import { z } from 'zod';
import { pageQuery } from '../../http/pagination.js';
import { timestamp } from '../../shared/schemas.js';
import { transcriptEventTypes } from '#protocol/transcript-events';
import { deliveryErrors, deliveryKinds, deliveryOutcomes } from './delivery.table.js';

/** What a record is of: a transcript event's type, or a model's or a tool's call (README, An agent without a server). */
export const deliveryEventTypes = [...transcriptEventTypes, 'model.call', 'tool.call'] as const;

const headers = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

export const deliverySchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(deliveryKinds).meta({
      description:
        "`turn_hook`: a turn's call to `hook_url`; `transcript`: a transcript event; `test`: a sample sent with test-hook; `model`: a turn's call to its agent's model; `tool`: the model's call of one of the agent's tools",
    }),
    deployment_id: z.uuid(),
    conversation_id: z.uuid().nullable(),
    turn_id: z.uuid().nullable(),
    event_id: z
      .string()
      .nullable()
      .meta({ description: "The transcript event's `id` (`evt_...`); null for turn hook calls" }),
    event_type: z.enum(deliveryEventTypes),
    url: z.string(),
    attempt: z.number().int().min(1).meta({ description: "1-based: the turn's or the event's attempt number" }),
    sent_at: timestamp,
    duration_ms: z.number().int().min(0),
    request: z
      .object({ headers: z.record(z.string(), z.string()), body: z.string() })
      .meta({ description: 'As sent, signatures included (a signature is not a secret)' }),
    response: z
      .object({
        status: z.number().int(),
        headers,
        body: z.string().meta({ description: 'At most 4 KiB' }),
        truncated: z.boolean(),
      })
      .nullable()
      .meta({ description: 'Null when no answer came (see `error`)' }),
    error: z.enum(deliveryErrors).nullable().meta({
      description: '`invalid_answer`: a 2xx answer the service could not read as one (a reply with invalid actions)',
    }),
    error_detail: z.string().nullable().meta({ description: 'Why the attempt failed, in words' }),
    outcome: z.enum(deliveryOutcomes).meta({ description: '`succeeded` for any 2xx answer the service could read' }),
    model_usage: z
      .object({
        first_token_ms: z.number().int().nullable(),
        tokens_in: z.number().int().nullable(),
        tokens_out: z.number().int().nullable(),
      })
      .nullable()
      .meta({
        description:
          "A model call's: ms from the request to its first token, and the tokens read and written as the model reported them (null otherwise)",
      }),
  })
  .meta({ id: 'Delivery' });
export type Delivery = z.infer<typeof deliverySchema>;

export const listDeliveriesQuery = pageQuery.extend({
  deployment_id: z.uuid().optional(),
  conversation_id: z.uuid().optional(),
  kind: z.enum(deliveryKinds).optional(),
  outcome: z.enum(deliveryOutcomes).optional(),
  event_type: z.enum(deliveryEventTypes).optional(),
  since: timestamp.optional().meta({ description: 'Only attempts sent at or after this time' }),
});
export type DeliveryFilter = Omit<z.infer<typeof listDeliveriesQuery>, 'page' | 'per_page'>;

export const testHookBody = z
  .strictObject({
    target: z.enum(['hook', 'transcript']).default('hook').meta({
      description: '`hook_url` (a `turn.created` sample) or `transcript_hook_url` (a `conversation.started` sample)',
    }),
  })
  .meta({ id: 'TestHook' });
