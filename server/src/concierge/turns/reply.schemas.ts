import { z } from 'zod';
import { codePoints, REPLY_PART_LIMITS, replyActions } from '#protocol/frames';

/** The deferred reply the customer's server posts for an acknowledged turn: it resolves the turn. */
export const finalReplyBody = z
  .strictObject({
    conversation_id: z.uuid(),
    turn_id: z.uuid(),
    reply_text: z
      .string()
      .min(1)
      .max(10_000)
      .meta({ description: 'The reply: it replaces whatever parts were streamed, and is what turn.resolved carries' }),
    actions: replyActions
      .optional()
      .meta({ description: 'At most 6: links, quick replies and client actions, shown with the reply' }),
  })
  .meta({ id: 'DeferredReply' });

/** A person's answer to a turn from the management API: the deferred reply's fields, the turn named by the path. */
export const personReplyBody = finalReplyBody
  .omit({ conversation_id: true, turn_id: true })
  .meta({ id: 'PersonReply' });

/** A part of the reply while it is written (README, Streaming a reply): shown and spoken as it comes. */
export const replyPartBody = z
  .strictObject({
    conversation_id: z.uuid(),
    turn_id: z.uuid(),
    part: z
      .number()
      .int()
      .min(0)
      .max(REPLY_PART_LIMITS.parts - 1)
      .meta({ description: 'From 0; the widget shows parts in this order, a gap waiting for the missing part' }),
    text: codePoints(1, REPLY_PART_LIMITS.partChars).meta({
      description: `1 to ${REPLY_PART_LIMITS.partChars} characters (code points); a turn's parts hold at most ${REPLY_PART_LIMITS.chars} together`,
    }),
  })
  .meta({ id: 'ReplyPart' });

/** Either body, as OpenAPI describes the route; a body with `part` is read as a part. */
export const replyBody = z.union([finalReplyBody, replyPartBody]);

export type FinalReplyInput = z.infer<typeof finalReplyBody>;
export type ReplyPartInput = z.infer<typeof replyPartBody>;
export type PersonReplyInput = z.infer<typeof personReplyBody>;

/** The schema a body is checked against: a part when it has `part`, the final reply otherwise (so its errors name that body's fields). */
export const replyBodySchemaFor = (body: unknown) =>
  body !== null && typeof body === 'object' && 'part' in body ? replyPartBody : finalReplyBody;

export const replyAcceptedSchema = z
  .object({
    turn_id: z.uuid(),
    status: z.enum(['resolved', 'acknowledged']).meta({
      description:
        '`resolved` for the final reply; `acknowledged` for a part (the turn still waits for its final reply)',
    }),
    part: z.number().int().optional().meta({ description: 'The part taken, for a part' }),
    duplicate: z.boolean(),
  })
  .meta({ id: 'ReplyAccepted' });
export type ReplyAccepted = z.infer<typeof replyAcceptedSchema>;
