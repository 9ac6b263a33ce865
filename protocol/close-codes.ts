/**
 * How the widget's WebSocket closes (README, Concierge sessions), in one table. It has no imports: the widget
 * bundles these numbers from here, so the two ends cannot drift apart.
 */
export const Close = {
  /** The widget's own goodbye. */
  normal: 1000,
  /** The server is shutting down; the widget reconnects (to another node) and resumes. */
  goingAway: 1001,
  /**
   * A frame over 16 KiB (sent by `ws` itself), or more sent than the service holds unhandled for
   * one socket (1,024 messages or 1 MiB); the widget reconnects and resumes.
   */
  frameTooLarge: 1009,
  /** A bug on our side; the widget reconnects and resumes. */
  internalError: 1011,
  /** The store cannot be reached right now (RFC 6455 "try again later"); the widget reconnects and resumes. */
  tryAgainLater: 1013,
  /** Not the protocol: the first frame was not a valid `hello`. */
  protocol: 4400,
  /** The token is bad or has expired; the widget fetches a new one. */
  badToken: 4401,
  /**
   * A token for another deployment, or another user's conversation; with the reason
   * `origin_not_allowed`, a page whose origin the deployment does not allow (the widget stops).
   */
  forbidden: 4403,
  /**
   * The conversation to resume does not exist on this deployment; with the reason
   * `unknown_deployment`, there is no such deployment (the widget stops).
   */
  unknownConversation: 4404,
  /** No `hello` within 10 s. */
  noHello: 4408,
  /** The deployment is inactive (reason `deployment_inactive`) or the conversation has ended; the widget stops. */
  ended: 4410,
  /** Too many sockets (per conversation) or new conversations (per user). */
  tooMany: 4429,
} as const;

export type CloseCode = (typeof Close)[keyof typeof Close];

/** Reasons of the closes that are not errors (an error closes with its message). */
export const CloseReason = {
  goingAway: 'server going away',
  ended: 'conversation ended',
  /** Refusals at the upgrade: the widget says which, and does not retry. */
  originNotAllowed: 'origin_not_allowed',
  unknownDeployment: 'unknown_deployment',
  deploymentInactive: 'deployment_inactive',
} as const;
