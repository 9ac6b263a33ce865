import { z } from 'zod';

/** The deferred reply the customer's server posts for an acknowledged turn. */
export const replyBody = z
  .strictObject({
    conversation_id: z.uuid(),
    turn_id: z.uuid(),
    reply_text: z.string().min(1).max(10_000),
  })
  .meta({ id: 'DeferredReply' });
export type ReplyInput = z.infer<typeof replyBody>;

export const replyAcceptedSchema = z
  .object({ turn_id: z.uuid(), status: z.literal('resolved'), duplicate: z.boolean() })
  .meta({ id: 'ReplyAccepted' });
