import type { Generated } from 'kysely';

export interface CustomerTable {
  id: string;
  name: string;
  created_at: string;
  /** 1 when the customer's console takes single sign-on (README, Your team); off by default. */
  sso_enabled: Generated<number>;
  /** JSON array of the email domains the identity provider may sign in for this customer. */
  sso_domains: Generated<string>;
}
