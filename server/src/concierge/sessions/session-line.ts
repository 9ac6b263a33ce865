import type { ServerFrame } from '#protocol/frames';
import type { AppError } from '../../errors.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import type { TurnInput } from '../turns/turn.service.js';

/**
 * What a session's parts may see and do on its socket (README, Concierge sessions): one narrow port
 * a part is given, not a callback for each thing it may do.
 */
export interface SessionLine {
  /** The deployment as this socket knows it now (read again with each token). */
  readonly dep: DeploymentContext;
  /** Set once `hello` is answered. */
  readonly conversationId: string | undefined;
  /** The visitor the token names, once `hello` is answered. */
  readonly sub: string | undefined;
  isClosed(): boolean;
  send(frame: ServerFrame): void;
  /** Answers with an `error` frame; the socket stays open. */
  tell(err: AppError): void;
  /** Tells and closes: the peer broke the protocol. */
  end(err: AppError): void;
  /** A failure while serving the socket: its refusal ends it with its code, a store outage asks it back, else a bug. */
  failed(err: unknown): void;
  /** A turn the visitor said, taken exactly as a `user_turn` would be (idempotent on `client_turn_id`). */
  turn(turn: TurnInput): void;
}
