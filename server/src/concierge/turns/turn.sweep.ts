import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../store/database.js';
import type { DeploymentDirectory } from '../deployment-context.js';
import { type EventRecorder, turnChanges } from '../events/event.recorder.js';
import type { TurnFailure, TurnStatus } from '../conversations/conversation.table.js';
import { claimTurn, type DueTurns, dueTurns, transitionTurn } from './turn.repository.js';

/** A turn left `pending` this long had its hook call cut off by a crash: it is failed. */
const STALE_PENDING_MS = 120_000;

/**
 * Ends the turns whose time is up: acknowledged turns past their reply timeout expire, and turns
 * whose hook call a crash cut off fail. Each turn is claimed inside the transaction that moves it
 * (on PostgreSQL with `FOR UPDATE SKIP LOCKED`), and moved only if still in its state, so of
 * several nodes exactly one acts.
 */
export class TurnSweep {
  constructor(
    private readonly db: Db,
    private readonly deployments: DeploymentDirectory,
    private readonly events: EventRecorder,
    /** PostgreSQL: claims skip rows another node holds. */
    private readonly skipLocked: boolean,
  ) {}

  async sweep(limit = 100): Promise<number> {
    const expired = await this.sweepDue({ status: 'acknowledged', column: 'expires_at', before: isoNow(), limit }, 'expired', 'reply_timeout');
    const stale = await this.sweepDue({ status: 'pending', column: 'created_at', before: isoIn(-STALE_PENDING_MS), limit }, 'failed', 'hook_failed');
    return expired + stale;
  }

  private async sweepDue(due: DueTurns, to: TurnStatus, reason: TurnFailure): Promise<number> {
    // Contexts are read before the writes: a unit of a batch touches only its own transaction.
    const moves = await Promise.all(
      (await dueTurns(this.db, due)).map(async (turn) => {
        const dep = await this.deployments.get(turn.deployment_id);
        if (!dep) return false;
        // One unit per turn, keyed by its conversation like every other change, so the lock order holds.
        return this.events.write(turn.conversation_id, async (trx, written) => {
          if (!(await claimTurn(trx, turn.id, due.status, this.skipLocked))) return false;
          const row = await transitionTurn(trx, turn.id, due.status, to, { failure_reason: reason });
          if (row) await this.events.record(trx, written, dep, row.conversation_id, turnChanges.failed(row.id, reason));
          return Boolean(row);
        });
      }),
    );
    return moves.filter(Boolean).length;
  }
}
