/**
 * A console user's role (README, Your team), least first: each can do what the one before it can.
 * `agent` answers visitors (the inbox, conversations, analytics read); `editor` builds (agents,
 * deployments, knowledge, model endpoints); `admin` also holds the API key, the team and the audit
 * log; `owner` also grants, changes and removes owners. The service checks them; the console offers
 * each role what it may use, from this same list.
 */
export const ROLES = ['agent', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/** Whether `role` may do what needs `needed`. */
export const reaches = (role: string, needed: Role): boolean =>
  isRole(role) && ROLES.indexOf(role) >= ROLES.indexOf(needed);
