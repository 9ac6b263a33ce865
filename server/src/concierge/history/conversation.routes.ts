import { deliverySeenBy } from '../deliveries/delivery.view.js';
import type { AuditTrail } from '../../audit/audit-trail.js';
import { defineRoute, type RouteDef } from '../../http/route.js';
import { deletedSchema, idParams } from '../../shared/schemas.js';
import type { ConversationHistory } from './conversation-history.js';
import {
  conversationDetailSchema,
  conversationSchema,
  exportConversationsQuery,
  listConversationsQuery,
} from './conversation.schemas.js';
import type { ConversationService } from '../conversations/conversation.service.js';

export function conversationRoutes(
  history: ConversationHistory,
  conversations: ConversationService,
  trail: AuditTrail,
): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/conversations',
      operationId: 'listConversations',
      summary: 'List conversations, newest first, filtered',
      tag: 'Conversations',
      query: listConversationsQuery,
      success: { status: 200, description: 'A page of conversations', data: conversationSchema.array(), list: true },
      handler: ({ principal, query: { page, per_page, ...filter } }) =>
        history.list(principal.customerId, filter, { page, per_page }),
    }),
    // Declared before `/:id`, which would otherwise take "export" for an id.
    defineRoute({
      method: 'get',
      path: '/api/v1/conversations/export',
      operationId: 'exportConversations',
      summary:
        'Stream conversations in full as NDJSON, one per line, newest first (the same filters; at most 10,000 a request; 2 at once per customer; cut after 30 s without the client reading)',
      tag: 'Conversations',
      query: exportConversationsQuery,
      errors: ['rate_limited'],
      success: {
        status: 200,
        description:
          'One ConversationDetail per line. Past 10,000, ask again with `created_before` set to the last line’s `created_at`',
        data: conversationDetailSchema,
        contentType: 'application/x-ndjson',
        stream: true,
      },
      handler: ({ principal, query }) => ({
        data: history.export(principal.customerId, query, deliverySeenBy(principal.role)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/conversations/:id',
      operationId: 'getConversation',
      summary:
        'Get a conversation with its turns (each with its hook attempts and reply receipt) and the events its widget received',
      tag: 'Conversations',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The conversation in full', data: conversationDetailSchema },
      handler: async ({ principal, params }) => ({
        data: await history.get(principal.customerId, params.id, deliverySeenBy(principal.role)),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/conversations/:id',
      operationId: 'deleteConversation',
      summary:
        'Erase a conversation with its turns, events, delivery records and unsent transcript events; an open one is ended first (reason "deleted")',
      tag: 'Conversations',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'Erased', data: deletedSchema },
      handler: async (ctx) => ({
        data: await conversations.erase(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
  ];
}
