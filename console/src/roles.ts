import { reaches, ROLES, type Role } from '#protocol/roles';

export type { Role };

/**
 * The least role each section of the console needs: the role its requests need (README, Your
 * team), so a page is offered only to whom it can serve.
 */
export const SECTION_ROLES: Readonly<Record<string, Role>> = {
  '': 'agent',
  inbox: 'agent',
  conversations: 'agent',
  analytics: 'agent',
  start: 'editor',
  agents: 'editor',
  deployments: 'editor',
  models: 'editor',
  knowledge: 'editor',
  try: 'editor',
  'api-key': 'admin',
  users: 'admin',
  audit: 'admin',
};

/** The signed-in user's role: set by the console's frame before any page renders. */
let current: Role = 'agent';

export const signedInAs = (role: Role): void => {
  current = role;
};

export const currentRole = (): Role => current;

/** Whether the signed-in user (or `role`) may do what needs `needed`. */
export const can = (needed: Role, role: Role = current): boolean => reaches(role, needed);

/** The roles the signed-in user may give: an owner any, anyone else up to admin. */
export const grantable = (role: Role = current): Role[] => ROLES.filter((r) => r !== 'owner' || role === 'owner');
