import { z } from 'zod';
import { defineRoute, type RouteDef } from '../../http/route.js';
import { idParams, timestamp } from '../../shared/schemas.js';
import type { ConversationBriefs } from './conversation-brief.js';

const briefSchema = z
  .object({
    summary: z.string().nullable().meta({ description: 'null when there is none: `note` says why' }),
    note: z.string().nullable(),
    at: timestamp,
  })
  .meta({ id: 'ConversationBrief' });

/** A brief of a conversation so far, for the person taking it over (README, A person in the conversation). */
export const briefRoute = (briefs: ConversationBriefs): RouteDef =>
  defineRoute({
    method: 'get',
    path: '/api/v1/conversations/:id/brief',
    operationId: 'getConversationBrief',
    summary: "A brief of the conversation so far, written by the agent's evaluation model (nothing is stored)",
    tag: 'Conversations',
    params: idParams,
    errors: ['not_found'],
    success: { status: 200, description: 'The brief, or why there is none', data: briefSchema },
    handler: async ({ principal, params }) => ({ data: await briefs.brief(principal.customerId, params.id) }),
  });
