import { z } from 'zod';
import { ROLES, type Role } from '#protocol/roles';

export const roleSchema = z.enum(ROLES).meta({
  id: 'Role',
  description:
    'agent: inbox, conversations, analytics (read); editor: also agents, deployments, knowledge, model endpoints; admin: also the API key, users and the audit log; owner: also owners',
});

/** What the API key is: everything but owners' affairs. */
export const API_KEY_ROLE: Role = 'admin';
