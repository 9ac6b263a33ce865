import type { Role } from '#protocol/roles';

/**
 * What the agent role (README, Your team: the people who answer visitors) is shown of a URL the
 * service calls (a hook, a transcript target, a tool, a model): its origin, never its path or
 * query, which may carry a customer's token. Every other role sees it whole.
 */
export function urlSeenBy(role: Role, url: string): string {
  if (role !== 'agent') return url;
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '…';
  }
}
