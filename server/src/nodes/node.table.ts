/** A service node that is running, or was (README, Running several nodes): its heartbeat says which. */
export interface ServiceNodeTable {
  id: string;
  started_at: string;
  /** Written every second while the node runs; a node silent for a few seconds is taken for dead. */
  heartbeat_at: string;
}
