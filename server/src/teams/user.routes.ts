import { z } from 'zod';
import type { AuditTrail } from '../audit/audit-trail.js';
import { EMAIL_ADDRESS } from '../console/console-accounts.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { deletedSchema, idParams, timestamp } from '../shared/schemas.js';
import { roleSchema } from './roles.js';
import type { TeamService } from './team.service.js';

const email = z.string().trim().max(320).regex(EMAIL_ADDRESS, 'must be an email address');

export const teamUserSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    role: roleSchema,
    status: z.enum(['active', 'invited']).meta({ description: 'invited until the link is used to choose a password' }),
    invitation_expires_at: timestamp.nullable(),
    created_at: timestamp,
    last_sign_in_at: timestamp.nullable(),
  })
  .meta({ id: 'User' });

export const invitationSchema = teamUserSchema
  .extend({
    invitation_url: z.url().meta({ description: 'One use, 72 hours: shown only here; send it to the person invited' }),
  })
  .meta({ id: 'Invitation' });

/** The team (README, Your team): invite, list, change a role, remove. */
export function userRoutes(team: TeamService, trail: AuditTrail): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/users',
      operationId: 'listUsers',
      summary: "List the customer's console users and open invitations, by email",
      tag: 'Team',
      success: { status: 200, description: 'Every user', data: teamUserSchema.array() },
      handler: async ({ principal }) => ({ data: await team.list(principal.customerId) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/users',
      operationId: 'inviteUser',
      summary:
        'Invite someone with a role: a one-time link (72 h) to choose a password, or to sign in with single sign-on. Only an owner invites an owner; asking again for someone still invited gives a fresh link; someone already in the team is 409',
      tag: 'Team',
      body: z.strictObject({ email, role: roleSchema }),
      errors: ['invalid_request', 'invalid_state'],
      success: { status: 201, description: 'Invited', data: invitationSchema },
      handler: async (ctx) => ({ data: await team.invite(ctx.principal, ctx.body, trail.by(ctx)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/users/:id',
      operationId: 'updateUser',
      summary:
        "Change a user's role; it counts from their next request. Only an owner grants or changes the owner role; the last owner cannot be demoted (409)",
      tag: 'Team',
      params: idParams,
      body: z.strictObject({ role: roleSchema }),
      errors: ['invalid_request', 'not_found', 'invalid_state'],
      success: { status: 200, description: 'The user', data: teamUserSchema },
      handler: async (ctx) => ({ data: await team.update(ctx.principal, ctx.params.id, ctx.body.role, trail.by(ctx)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/users/:id',
      operationId: 'removeUser',
      summary:
        'Remove a user (or withdraw an invitation): their sessions and activity streams end at once. Only an owner removes an owner; the last owner cannot be removed (409)',
      tag: 'Team',
      params: idParams,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'Removed', data: deletedSchema },
      handler: async (ctx) => ({ data: await team.remove(ctx.principal, ctx.params.id, trail.by(ctx)) }),
    }),
  ];
}
