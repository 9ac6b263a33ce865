import { AppError } from '../../errors.js';
import type { Db } from '../../store/database.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import { countDuplicateReply, findTurnOf } from '../conversations/turn.repository.js';
import type { DeploymentContext, DeploymentDirectory } from '../deployment-context.js';
import type { ConversationBus } from '../events/conversation-bus.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { verifySignature } from '../signature.js';
import type { ReplyInput } from './reply.schemas.js';

/**
 * A customer may answer the hook 202 and post the reply at once; the reply can then arrive
 * before the acknowledgement commits. It waits this long for the turn to leave `pending`.
 */
const PENDING_REPLY_WAIT_MS = 2_000;

/** The deferred reply: the customer's signed answer resolves an acknowledged turn. */
export class ReplyService {
  constructor(private readonly parts: { db: Db; deployments: DeploymentDirectory; events: EventRecorder; bus: ConversationBus }) {}

  /** The deployment a deferred reply names, once its signature over these exact bytes verifies. */
  async verifyReply(deploymentId: string, raw: Buffer, signature: string | undefined): Promise<DeploymentContext> {
    // A reply signed with a secret just rotated on another node verifies here too (see accepting).
    const found = await this.parts.deployments.accepting(deploymentId, (dep) => verifySignature(signature, raw, dep.secrets));
    if (!found) throw new AppError('not_found', 'Deployment not found');
    if (!found.accepted) throw new AppError('invalid_signature', 'X-Service-Signature must be sha256=<lowercase hex HMAC-SHA256 of the raw body> under the signing secret');
    return found.dep;
  }

  /** Resolves an acknowledged turn with a verified reply; stored before this returns, so a 202 loses nothing. */
  async acceptReply(dep: DeploymentContext, reply: ReplyInput): Promise<{ turn_id: string; duplicate: boolean }> {
    const { conversation_id, turn_id, reply_text } = reply;
    const scope = { turnId: turn_id, conversationId: conversation_id, deploymentId: dep.id };
    const deadline = Date.now() + PENDING_REPLY_WAIT_MS;
    for (;;) {
      const resolved = await this.parts.events.write(conversation_id, async (unit) =>
        Boolean(await turnLifecycle.resolve(unit, { dep, conversationId: conversation_id }, scope, reply_text)),
      );
      if (resolved) return { turn_id, duplicate: false };
      // Not acknowledged (any more): say why, from the turn as it is now.
      const change = this.nextChange(conversation_id, deadline - Date.now());
      const current = await findTurnOf(this.parts.db, scope);
      if (current?.status === 'pending' && Date.now() < deadline) {
        await change.happened;
        continue;
      }
      change.cancel();
      // Acknowledged between the attempt and the read: try again.
      if (current?.status === 'acknowledged') continue;
      if (!current) throw new AppError('turn_not_found', 'No such turn in that conversation of this deployment');
      if (current.status === 'pending') throw new AppError('turn_not_acknowledged', 'The turn has not been acknowledged yet: the hook call is still in flight');
      if (current.status === 'failed' || current.status === 'expired') throw new AppError('turn_not_pending', `The turn is ${current.status}; it takes no reply`);
      if (current.reply_text === reply_text) {
        // Counted for the history, where a customer sees its server sending a reply more than once.
        await countDuplicateReply(this.parts.db, turn_id);
        return { turn_id, duplicate: true };
      }
      throw new AppError('turn_already_resolved', 'The turn was already resolved with a different reply_text');
    }
  }

  /** Resolves when the conversation stores something, or after `ms`; subscribed from the call on. */
  private nextChange(conversationId: string, ms: number): { happened: Promise<void>; cancel(): void } {
    let cancel = () => {};
    const happened = new Promise<void>((resolve) => {
      const timer = setTimeout(() => cancel(), Math.max(ms, 0));
      const unsubscribe = this.parts.bus.subscribe(conversationId, () => cancel());
      cancel = () => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
    });
    return { happened, cancel: () => cancel() };
  }
}
