import type { Role } from '#protocol/roles';

/**
 * Who a management request acts for: an API key, or a console user signed in with a session. The
 * transport only carries it; the middleware `app.ts` builds decides who it is.
 */
export interface Principal {
  customerId: string;
  /** The API key used; null for a console session. */
  keyId: string | null;
  /** The console user, for a console session. */
  userId?: string;
  /** Their address, for the record of what they changed. */
  email?: string;
  /** What the caller may do, as the management routes' table names it (README, Your team). */
  role: Role;
}

/** Who made a request, for per-caller limits: the API key, or the console user. */
export const principalKey = (principal: Principal): string => principal.keyId ?? `user:${principal.userId}`;
