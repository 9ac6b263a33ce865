/**
 * One error type for the whole service. Services throw it with a stable code; the HTTP edge
 * renders it through {@link httpStatusOf}, so a code means the same status everywhere.
 */
export const errorStatus = {
  invalid_json: 400,
  invalid_request: 400,
  unauthorized: 401,
  invalid_signature: 401,
  not_found: 404,
  turn_not_found: 404,
  invalid_state: 409,
  idempotency_conflict: 409,
  turn_not_acknowledged: 409,
  turn_not_pending: 409,
  turn_already_resolved: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export const notFound = (what = 'Resource'): AppError => new AppError('not_found', `${what} not found`);
export const invalidState = (message: string): AppError => new AppError('invalid_state', message);
