import type { Role } from '#protocol/roles';

/** A person who signs in to the console; belongs to one customer. */
export interface ConsoleUserTable {
  id: string;
  customer_id: string;
  /** Lower-cased: one account per address in a customer (a person may be in several teams). */
  email: string;
  /** `scrypt$N$r$p$salt$hash` (base64url), or null until the welcome link is used. */
  password_hash: string | null;
  /** SHA-256 of the one-time welcome token; null once used. */
  welcome_hash: string | null;
  welcome_expires_at: string | null;
  created_at: string;
  last_sign_in_at: string | null;
  /** What they may do (README, Your team): agent, editor, admin or owner. */
  role: Role;
}

/** An identity provider's subject (`iss` + `sub`), linked once to a console user it signs in as (README, Your team). */
export interface ConsoleIdentityTable {
  issuer: string;
  subject: string;
  user_id: string;
  created_at: string;
}

/** Whether a customer's console takes single sign-on (README, Your team), and for which email domains; no row: off. */
export interface ConsoleSingleSignOnTable {
  customer_id: string;
  enabled: number;
  /** JSON array of the email domains the identity provider may sign in for this customer. */
  domains: string;
}

/** A signed-in browser. Only the SHA-256 of its cookie's token is kept. */
export interface ConsoleSessionTable {
  token_hash: string;
  user_id: string;
  customer_id: string;
  created_at: string;
  last_seen_at: string;
  /** Absolute end (12 h after sign-in); the idle end is last_seen_at + 2 h. */
  expires_at: string;
}

/**
 * A sign-in attempt, noted before its password is checked and forgotten once it signs in: what
 * stays is a failure (or one still being checked). Kept 15 minutes, counted per email and per
 * client address (an IPv6 client by its /56).
 */
export interface ConsoleSignInFailureTable {
  id: string;
  email: string;
  address: string;
  at: string;
}
