import { AppError, invalidState, notFound } from '../../errors.js';
import type { Db } from '../../database.js';
import { findConversation } from '../conversations/conversation.repository.js';
import { isoIn } from '../../shared/time.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import type { ReplyTaken } from '../conversations/turn.types.js';
import type { DeploymentContext, DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { ConversationBus } from '../events/conversation-bus.js';
import type { EventRecorder, UnitOfWork } from '../events/event.recorder.js';
import { verifySignature } from '../signature.js';
import type { FinalReplyInput, PersonReplyInput, ReplyAccepted, ReplyPartInput } from './reply.schemas.js';

/**
 * A customer may answer the hook 202 and post the reply (or its first part) at once; it can then
 * arrive before the acknowledgement commits. It waits this long for the turn to leave `pending`.
 */
const PENDING_REPLY_WAIT_MS = 2_000;

/** Why a reply or part was refused, by what became of it. */
const REFUSALS: Record<Exclude<ReplyTaken, 'stored' | 'duplicate'>, (part: boolean) => AppError> = {
  not_found: () => new AppError('turn_not_found', 'No such turn in that conversation of this deployment'),
  pending: () =>
    new AppError('turn_not_acknowledged', 'The turn has not been acknowledged yet: the hook call is still in flight'),
  failed: () => new AppError('turn_not_pending', 'The turn is failed; it takes no reply'),
  expired: () => new AppError('turn_not_pending', 'The turn is expired; it takes no reply'),
  resolved: (part) =>
    new AppError(
      'turn_already_resolved',
      part
        ? 'The turn was already resolved: its parts ended with the final reply'
        : 'The turn was already resolved with a different reply_text or actions',
    ),
  conflict: () => new AppError('part_conflict', 'This part was already received with different text'),
  too_long: () => new AppError('invalid_state', 'The parts of one reply hold at most 20000 characters together'),
};

/** The deferred reply: the customer's signed answer, whole or in parts, to an acknowledged turn. */
export class ReplyService {
  constructor(
    private readonly parts: { db: Db; deployments: DeploymentDirectory; events: EventRecorder; bus: ConversationBus },
  ) {}

  /** The deployment a deferred reply names, once its signature over these exact bytes verifies. */
  async verifyReply(deploymentId: string, raw: Buffer, signature: string | undefined): Promise<DeploymentContext> {
    // A reply signed with a secret just rotated on another node verifies here too (see accepting).
    const found = await this.parts.deployments.accepting(deploymentId, (dep) =>
      verifySignature(signature, raw, dep.signing.secrets),
    );
    if (!found) throw new AppError('not_found', 'Deployment not found');
    if (!found.accepted)
      throw new AppError(
        'invalid_signature',
        'X-Service-Signature must be sha256=<lowercase hex HMAC-SHA256 of the raw body> under the signing secret',
      );
    return found.dep;
  }

  /**
   * Resolves an acknowledged turn with a verified reply, or a person's (`by`, their name); stored
   * before this returns, so a 202 loses nothing.
   */
  async acceptReply(dep: DeploymentContext, reply: FinalReplyInput, by?: string): Promise<ReplyAccepted> {
    const { conversation_id, turn_id, reply_text, actions = [] } = reply;
    const scope = { turnId: turn_id, conversationId: conversation_id, deploymentId: dep.id };
    const taken = await this.take(conversation_id, (unit) =>
      turnLifecycle.resolve(unit, { dep, conversationId: conversation_id }, scope, { text: reply_text, actions, by }),
    );
    return { turn_id, status: 'resolved', duplicate: this.accepted(taken, false) };
  }

  /** A person's answer to a turn of a conversation of this customer's that they have taken over (README, A person in the conversation). */
  async acceptPersonReply(
    customerId: string,
    conversationId: string,
    turnId: string,
    reply: PersonReplyInput,
  ): Promise<ReplyAccepted> {
    const conversation = await findConversation(this.parts.db, conversationId);
    const dep =
      conversation?.customer_id === customerId
        ? await this.parts.deployments.get(conversation.deployment_id)
        : undefined;
    if (!conversation || !dep) throw notFound('Conversation');
    if (conversation.handler !== 'person' || !conversation.handler_name)
      throw invalidState(
        'Take the conversation over first (POST /api/v1/conversations/{id}/takeover): a reply is shown with the name of the person handling it',
      );
    return this.acceptReply(
      dep,
      { conversation_id: conversationId, turn_id: turnId, ...reply },
      conversation.handler_name,
    );
  }

  /** Stores a part of an acknowledged turn's reply and restarts the turn's reply timeout. */
  async acceptPart(dep: DeploymentContext, input: ReplyPartInput): Promise<ReplyAccepted> {
    const { conversation_id, turn_id, part, text } = input;
    const scope = { turnId: turn_id, conversationId: conversation_id, deploymentId: dep.id };
    const taken = await this.take(conversation_id, (unit) =>
      turnLifecycle.part(
        unit,
        { dep, conversationId: conversation_id },
        scope,
        { part, text },
        isoIn(dep.limits.replyTimeoutS * 1000),
      ),
    );
    return { turn_id, status: 'acknowledged', part, duplicate: this.accepted(taken, true) };
  }

  /** Whether it was a duplicate; a refusal throws its error. */
  private accepted(taken: ReplyTaken, part: boolean): boolean {
    if (taken === 'stored' || taken === 'duplicate') return taken === 'duplicate';
    throw REFUSALS[taken](part);
  }

  /**
   * Runs the attempt; while it finds the turn still `pending`, runs it again at each change of the
   * conversation until {@link PENDING_REPLY_WAIT_MS} have passed. Only a reply that finds its turn
   * pending subscribes, and it tries once more right after: an acknowledgement in between is not missed.
   */
  private async take(conversationId: string, attempt: (unit: UnitOfWork) => Promise<ReplyTaken>): Promise<ReplyTaken> {
    const deadline = Date.now() + PENDING_REPLY_WAIT_MS;
    let changes: Changes | undefined;
    try {
      for (;;) {
        const taken = await this.parts.events.write(conversationId, attempt);
        if (taken !== 'pending') return taken;
        if (!changes) changes = new Changes(this.parts.bus, conversationId);
        else if (!(await changes.next(deadline - Date.now()))) return taken;
      }
    } finally {
      changes?.close();
    }
  }
}

/** The changes of one conversation as they are stored, from its creation on. */
class Changes {
  #seen = false;
  #wake: (() => void) | undefined;
  readonly #unsubscribe: () => void;

  constructor(bus: ConversationBus, conversationId: string) {
    this.#unsubscribe = bus.subscribe(conversationId, () => {
      this.#seen = true;
      this.#wake?.();
    });
  }

  /** True once something changed since the last call, false when `ms` pass first. */
  async next(ms: number): Promise<boolean> {
    if (!this.#seen && ms > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    const seen = this.#seen;
    this.#seen = false;
    return seen;
  }

  close(): void {
    this.#unsubscribe();
    this.#wake?.();
  }
}
