import { Close, type CloseCode } from '#protocol/close-codes';

interface ErrorKind {
  /** The HTTP status; absent for the codes that only the widget's socket uses. */
  status?: number;
  /** The close code when the error ends the widget's socket. */
  close?: CloseCode;
}

/**
 * One error type for the whole service, on both transports. Services throw {@link AppError} with
 * a stable code; the HTTP edge renders it with the code's status, the session gateway with its
 * close code, so a code means the same thing everywhere.
 */
const errorTable = {
  invalid_json: { status: 400 },
  invalid_request: { status: 400 },
  unauthorized: { status: 401 },
  invalid_signature: { status: 401 },
  // A console user whose role does not reach the route's (README, Your team); on the widget's socket, another's token or conversation.
  forbidden: { status: 403, close: Close.forbidden },
  not_found: { status: 404, close: Close.unknownConversation },
  turn_not_found: { status: 404 },
  invalid_state: { status: 409 },
  idempotency_conflict: { status: 409 },
  turn_not_acknowledged: { status: 409 },
  turn_not_pending: { status: 409 },
  turn_already_resolved: { status: 409 },
  part_conflict: { status: 409 },
  // A customer's stored knowledge at its bound (README, Answers from your documents).
  quota_exceeded: { status: 409 },
  // An agent whose spec requires its tests to pass, with one failing (README, Tests and analysis).
  tests_failed: { status: 409 },
  payload_too_large: { status: 413 },
  unsupported_media_type: { status: 415 },
  rate_limited: { status: 429, close: Close.tooMany },
  internal_error: { status: 500, close: Close.internalError },
  unavailable: { status: 503, close: Close.tryAgainLater },
  // The widget's socket only (README, Concierge sessions).
  protocol_error: { close: Close.protocol },
  invalid_token: { close: Close.badToken },
  token_expired: { close: Close.badToken },
  hello_timeout: { close: Close.noHello },
  deployment_inactive: { close: Close.ended },
  too_many_connections: { close: Close.tooMany },
  too_much_queued: { close: Close.frameTooLarge },
  invalid_message: {},
  too_many_pending_turns: {},
  // An utterance the service could not make a turn of (README, Voice in every browser).
  speech_too_long: {},
  speech_unrecognized: {},
  speech_unavailable: {},
  speech_busy: {},
  // Told with the socket left open (a turn after the end), or closing it (the conversation erased).
  conversation_ended: { close: Close.ended },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof errorTable;
/** The codes an HTTP response can carry. */
export type HttpErrorCode = {
  [C in ErrorCode]: (typeof errorTable)[C] extends { status: number } ? C : never;
}[ErrorCode];

export const errorStatus = Object.fromEntries(
  Object.entries(errorTable).flatMap(([code, kind]) => ('status' in kind ? [[code, kind.status]] : [])),
) as Record<HttpErrorCode, number>;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Sent as `Retry-After` with a refusal that lifts by itself (a rate limit). */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** A socket-only code reaching HTTP is a bug: 500. */
  get status(): number {
    return (errorTable[this.code] as ErrorKind).status ?? 500;
  }

  /** The close code when this error ends the widget's socket (1011 when it has none). */
  get close(): CloseCode {
    return (errorTable[this.code] as ErrorKind).close ?? Close.internalError;
  }
}

export const notFound = (what = 'Resource'): AppError => new AppError('not_found', `${what} not found`);
export const invalidState = (message: string): AppError => new AppError('invalid_state', message);
