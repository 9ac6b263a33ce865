/** How the activity stream behaves (README, A person in the conversation; docs/performance.md). */
export interface ActivitySettings {
  /** Other nodes store events too (PostgreSQL): their notifications are followed, and the store read periodically. */
  otherNodes: boolean;
  /** How often a feed asks the store what other nodes stored (PostgreSQL; a lost notification costs this much delay). */
  catchUpEveryMs: number;
  /** A reader that has this much unsent is dropped; it resumes with Last-Event-ID. */
  maxUnsentBytes: number;
  /** At most this long passes between two things a reader is sent: a comment keeps proxies from closing a quiet stream. */
  heartbeatMs: number;
  /** Streams one customer may hold open on this node at once; past it `429`. */
  streamsPerCustomer: number;
  /** Streams one API key or console user may hold open on this node at once; past it `429`. */
  streamsPerPrincipal: number;
  /**
   * What reaches a feed within this window goes to each reader in one write: with a hundred
   * readers, a write per event would cost the turns a quarter of their throughput (docs/performance.md).
   */
  flushEveryMs: number;
}

export const ACTIVITY_DEFAULTS: Omit<ActivitySettings, 'otherNodes'> = {
  catchUpEveryMs: 2_000,
  maxUnsentBytes: 1024 * 1024,
  heartbeatMs: 15_000,
  flushEveryMs: 25,
  streamsPerCustomer: 50,
  streamsPerPrincipal: 10,
};
