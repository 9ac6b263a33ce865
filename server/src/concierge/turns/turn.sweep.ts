import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import { claimTurn, type DueTurns, dueTurns } from '../conversations/turn-sweep.repository.js';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';

/** A turn left `pending` this long had its hook call cut off by a crash: it is failed. */
const STALE_PENDING_MS = 120_000;

/**
 * Ends the turns whose time is up (see turnLifecycle.lapse): acknowledged turns past their reply
 * timeout expire, and turns whose hook call a crash cut off fail. Each turn is claimed inside the
 * transaction that moves it (on PostgreSQL with `FOR UPDATE SKIP LOCKED`), and moved only if
 * still in its state, so of several nodes exactly one acts.
 */
export class TurnSweep {
  constructor(
    private readonly parts: { db: Db; deployments: DeploymentDirectory; events: EventRecorder; dialect: Dialect },
  ) {}

  async sweep(limit = 100): Promise<number> {
    const expired = await this.#sweepDue({ status: 'acknowledged', column: 'expires_at', before: isoNow(), limit });
    const stale = await this.#sweepDue({
      status: 'pending',
      column: 'created_at',
      before: isoIn(-STALE_PENDING_MS),
      limit,
    });
    return expired + stale;
  }

  async #sweepDue(due: DueTurns & { status: 'acknowledged' | 'pending' }): Promise<number> {
    const { db, deployments, events, dialect } = this.parts;
    // Contexts are read before the writes: a unit of a batch touches only its own transaction.
    const moves = await Promise.all(
      (await dueTurns(db, due)).map(async (turn) => {
        const dep = await deployments.get(turn.deployment_id);
        if (!dep) return false;
        // One unit per turn, keyed by its conversation like every other change, so the lock order holds.
        return events.write(turn.conversation_id, async (unit) => {
          if (!(await claimTurn(unit.trx, turn.id, due.status, dialect))) return false;
          return Boolean(
            await turnLifecycle.lapse(unit, { dep, conversationId: turn.conversation_id }, turn.id, due.status),
          );
        });
      }),
    );
    return moves.filter(Boolean).length;
  }
}
