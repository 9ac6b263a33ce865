/**
 * One change, by whom, to what (README, Your team): written in the transaction of the change it
 * records, never updated; deleted only by the retention purge (AUDIT_RETENTION_DAYS).
 */
export interface AuditLogTable {
  id: string;
  customer_id: string;
  at: string;
  /** `user` (a console user), `api_key`, `admin` (an `npm run admin` command) or `service` (the service itself). */
  actor_type: string;
  /** The user's or the key's id; null for the admin command and the service. */
  actor_id: string | null;
  actor_email: string | null;
  /** `<target>.<verb>`, as `agent.updated`. */
  action: string;
  target_type: string;
  target_id: string | null;
  /** JSON array of the field names that changed: names only, never a value. */
  changes: string;
  /** JSON object saying what the change was, where a name is not enough (an origin before and after, a sign-in method); never a secret. */
  detail: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}
