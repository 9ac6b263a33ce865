/**
 * Why a call was refused by {@link verifyHook}: answer it with `401` (or `400` for `invalid_body`).
 * `no_secret` and `invalid_secret` are your configuration's fault, not the caller's.
 */
export type HookVerificationCode =
  'no_secret' | 'invalid_secret' | 'missing_signature' | 'invalid_signature' | 'stale_timestamp' | 'invalid_body';

export class HookVerificationError extends Error {
  override readonly name = 'HookVerificationError';
  constructor(
    readonly code: HookVerificationCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The service refused a request for good (a `4xx`, or a `409` that retrying cannot change), or
 * kept failing until the retries ran out. `code` is the service's error code (`turn_not_pending`,
 * `turn_already_resolved`, ...) or `network` when no answer came.
 */
export class ConciergeRequestError extends Error {
  override readonly name = 'ConciergeRequestError';
  constructor(
    readonly status: number | null,
    readonly code: string,
    message: string,
    /** The service's `Retry-After`, in seconds, when it gave one. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}
