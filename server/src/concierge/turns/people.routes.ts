import { z } from 'zod';
import type { AuditTrail } from '../../audit/audit-trail.js';
import { defineRoute, type RouteDef } from '../../http/route.js';
import { idParams } from '../../shared/schemas.js';
import type { ConversationHistory } from '../history/conversation-history.js';
import { conversationSchema } from '../history/conversation.schemas.js';
import type { ConversationHandling } from '../conversations/handling.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import { replyActions } from '#protocol/frames';
import { personReplyBody, replyAcceptedSchema } from './reply.schemas.js';
import type { ReplyService } from './reply.service.js';

const personName = z.string().min(1).max(60).meta({ description: 'The name visitors see' });
const takeoverBody = z.strictObject({ name: personName }).meta({ id: 'Takeover' });
const messageBody = z
  .strictObject({ text: z.string().min(1).max(4000), actions: replyActions.optional(), name: personName })
  .meta({ id: 'PersonMessage' });
const turnParams = idParams.extend({ turn_id: z.uuid() });

/** A person in the conversation (README, A person in the conversation): take over, answer, write, hand back. */
export function peopleRoutes(parts: {
  handling: ConversationHandling;
  conversations: ConversationService;
  history: ConversationHistory;
  replies: ReplyService;
  trail: AuditTrail;
}): RouteDef[] {
  const { handling, conversations, history, replies, trail } = parts;
  /** A change made, then the conversation's list item as it is now. */
  const itemAfter = async (change: Promise<void>, customerId: string, id: string) => {
    await change;
    return { data: await history.item(customerId, id) };
  };
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/conversations/:id/takeover',
      operationId: 'takeOverConversation',
      summary:
        "A person handles the conversation: the widget is told (operator_joined); turns from now on are acknowledged without calling the hook and wait for a person's answer (person_reply_timeout_s); a second takeover renames them; clears needs_person",
      tag: 'Conversations',
      params: idParams,
      body: takeoverBody,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: "The conversation's list item", data: conversationSchema },
      handler: (ctx) =>
        itemAfter(
          handling.takeOver(ctx.principal.customerId, ctx.params.id, ctx.body.name, trail.by(ctx)),
          ctx.principal.customerId,
          ctx.params.id,
        ),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/conversations/:id/release',
      operationId: 'releaseConversation',
      summary:
        'Back to the agent: the widget is told (operator_left), and turns from now on go to the hook again; 409 while the agent already handles it',
      tag: 'Conversations',
      params: idParams,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: "The conversation's list item", data: conversationSchema },
      handler: (ctx) =>
        itemAfter(
          handling.release(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
          ctx.principal.customerId,
          ctx.params.id,
        ),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/conversations/:id/close',
      operationId: 'closeConversation',
      summary:
        'A person closes the conversation: it ends (`conversation_ended {reason: "closed"}`, the widget thanks the visitor), its waiting turns fail; 409 once it has ended',
      tag: 'Conversations',
      params: idParams,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: "The conversation's list item", data: conversationSchema },
      handler: (ctx) =>
        itemAfter(
          conversations.close(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
          ctx.principal.customerId,
          ctx.params.id,
        ),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/conversations/:id/turns/:turn_id/reply',
      operationId: 'answerTurn',
      summary:
        "A person's answer to an acknowledged turn of a conversation they have taken over, shown to the visitor with their name; the signed reply's outcomes (202, an identical repeat 200, the same 409s)",
      tag: 'Conversations',
      params: turnParams,
      body: personReplyBody,
      errors: [
        'not_found',
        'invalid_state',
        'turn_not_found',
        'turn_not_acknowledged',
        'turn_not_pending',
        'turn_already_resolved',
      ],
      success: {
        status: 202,
        description: 'Stored and on its way to the widget; 200 with duplicate: true for an identical repeat',
        data: replyAcceptedSchema,
      },
      handler: async ({ principal, params, body }) => {
        const result = await replies.acceptPersonReply(principal.customerId, params.id, params.turn_id, body);
        return { status: result.duplicate ? 200 : 202, data: result };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/conversations/:id/messages',
      operationId: 'writeMessage',
      summary:
        'A person writes to the visitor of an open conversation without a turn to answer (the widget gets a message event; the transcript message.created)',
      tag: 'Conversations',
      params: idParams,
      body: messageBody,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: "The conversation's list item", data: conversationSchema },
      handler: ({ principal, params, body }) =>
        itemAfter(
          handling.message(principal.customerId, params.id, {
            text: body.text,
            actions: body.actions ?? [],
            name: body.name,
          }),
          principal.customerId,
          params.id,
        ),
    }),
  ];
}
