export interface ApiKeyTable {
  id: string;
  customer_id: string;
  /** Hex SHA-256 of the full key: the key itself is never stored. */
  key_hash: string;
  prefix: string;
  last4: string;
  created_at: string;
  last_used_at: string | null;
  /** Null for the current key; set when a rotation retires it (now, or after the grace period). */
  expires_at: string | null;
}

export interface UsageDailyTable {
  customer_id: string;
  day: string;
  method: string;
  route: string;
  requests: number;
  errors: number;
}
