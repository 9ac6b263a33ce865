export type IdempotencyState = 'running' | 'done';

/** The first response to an Idempotency-Key, kept 24 h per customer so that a retry gets it again. */
export interface IdempotencyKeyTable {
  customer_id: string;
  /** SHA-256 of the Idempotency-Key: the key itself opens the sealed body, so it is never stored. */
  key: string;
  /** Hex SHA-256 of the method, the path with its query and the body: what the key was used for. */
  fingerprint: string;
  state: IdempotencyState;
  response_status: number | null;
  /** JSON object of the response headers that are part of the answer (Content-Type, Location). */
  response_headers: string | null;
  /** Sealed under the Idempotency-Key (see ResponseSeal): it may carry a secret shown once. */
  response_body: string | null;
  /** A `running` request that has not finished by then was lost with its node: another may take the key over. */
  locked_until: string;
  created_at: string;
}
