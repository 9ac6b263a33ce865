import { BackgroundLoop } from '../shared/background-loop.js';
import { newId } from '../shared/random.js';
import { isoIn, isoNow } from '../shared/time.js';
import type { Db } from '../database.js';
import type { StoreHealth } from '../store/store-health.js';
import { beat, forgetNodesSilentSince, removeNode } from './node.repository.js';

/** How often a node says it is alive. */
export const HEARTBEAT_EVERY_MS = 1_000;
/** A node silent this long is taken for dead: several missed beats, not one slow one. */
export const SILENT_AFTER_MS = 5_000;
/** Rows of nodes silent this long are removed. */
const FORGET_AFTER_MS = 86_400_000;

/**
 * This node's heartbeat in the store, so the other nodes (or this one's next start, on SQLite)
 * know when it has died and take over what it was doing (README, Running several nodes).
 */
export class NodeHeartbeat {
  /** This process's node: a new one at every start. */
  readonly id = newId();
  readonly #startedAt = isoNow();
  readonly #loop: BackgroundLoop;

  constructor(private readonly parts: { db: Db; health: StoreHealth }) {
    const pass = async () => {
      await beat(parts.db, this.id, this.#startedAt, isoNow());
      await forgetNodesSilentSince(parts.db, isoIn(-FORGET_AFTER_MS));
    };
    this.#loop = new BackgroundLoop(
      { what: 'node heartbeat', pass, health: parts.health },
      { everyMs: HEARTBEAT_EVERY_MS },
    );
  }

  async start(): Promise<void> {
    await this.#loop.run();
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
    await removeNode(this.parts.db, this.id).catch((err) => void this.parts.health.failed(err, 'node heartbeat'));
  }
}
