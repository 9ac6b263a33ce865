import { type Audit, type AuditEntry, auditEntry } from '../../audit/audit-trail.js';
import { AppError, invalidState, notFound } from '../../errors.js';
import { isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { Change, EventRecorder } from '../events/event.recorder.js';
import type { Handler, ReplyAction } from '#protocol/frames';
import type { TranscriptEvent } from '#protocol/transcript-events';
import { VISITOR_ASKED } from '#protocol/handoff';
import { type ConversationRow, findConversation, lockConversation } from './conversation.repository.js';

/** The transcript event of a change of who handles a conversation. */
export const handoffEvent = (data: {
  handler: Handler;
  name: string | null;
  needs_person: boolean;
  reason: string | null;
}): TranscriptEvent => ({ type: 'conversation.handoff', data });

/** A person's message, written without a turn to answer. */
export interface PersonMessage {
  text: string;
  actions: ReplyAction[];
  name: string;
}

/**
 * A person in the conversation (README, A person in the conversation): taking it over from the
 * agent, handing it back, and writing to the visitor. Each is one unit of work on the locked
 * conversation, told to the widget and the transcript.
 */
export class ConversationHandling {
  constructor(private readonly parts: { db: Db; deployments: DeploymentDirectory; events: EventRecorder }) {}

  /** A person handles the conversation from now on, by this name; a second takeover renames them. It no longer needs a person. */
  takeOver(customerId: string, id: string, name: string, audit: Audit): Promise<void> {
    const entry = auditEntry('conversation.taken_over', id, { changes: ['handler'] });
    return this.change(
      customerId,
      id,
      (conversation) => ({
        events: [{ type: 'operator_joined', name }],
        transcript: [handoffEvent({ handler: 'person', name, needs_person: false, reason: null })],
        conversation: {
          handler: 'person',
          handler_name: name,
          needs_person: 0,
          handoff_reason: null,
          handoff_at: isoNow(),
        },
        // A takeover is a handoff (README, Knowing how it goes); a rename is not.
        ...(conversation.handler === 'person' ? {} : { tally: { handoffs: 1 } }),
      }),
      { audit, entry },
    );
  }

  /** The agent handles the conversation again; refused while it already does. */
  release(customerId: string, id: string, audit: Audit): Promise<void> {
    const entry = auditEntry('conversation.released', id, { changes: ['handler'] });
    return this.change(
      customerId,
      id,
      (conversation) => {
        if (conversation.handler !== 'person') return invalidState('The agent already handles this conversation');
        return {
          events: [{ type: 'operator_left', name: conversation.handler_name ?? '' }],
          transcript: [
            handoffEvent({
              handler: 'agent',
              name: null,
              needs_person: conversation.needs_person === 1,
              reason: conversation.handoff_reason,
            }),
          ],
          conversation: { handler: 'agent', handler_name: null, handoff_at: isoNow() },
        };
      },
      { audit, entry },
    );
  }

  /**
   * The visitor asks for a person (the widget offers it while they wait for an answer): the
   * conversation needs one, and they are told. Said again, it is told again but counted once;
   * while a person already handles it, nothing changes.
   */
  askForPerson(customerId: string, id: string): Promise<void> {
    return this.change(customerId, id, (conversation) => {
      if (conversation.handler === 'person') return { events: [], transcript: [] };
      return {
        events: [{ type: 'person_requested' }],
        transcript: [handoffEvent({ handler: 'agent', name: null, needs_person: true, reason: VISITOR_ASKED })],
        conversation: { needs_person: 1, handoff_reason: VISITOR_ASKED, handoff_at: isoNow() },
        ...(conversation.needs_person === 1 ? {} : { tally: { handoffs: 1 } }),
      };
    });
  }

  /** A person writes to the visitor without a turn to answer. */
  message(customerId: string, id: string, message: PersonMessage): Promise<void> {
    return this.change(customerId, id, () => ({
      events: [{ type: 'message', ...message }],
      transcript: [{ type: 'message.created', data: { ...message } }],
    }));
  }

  /**
   * One change to an open conversation of this customer's, or the refusal `decide` returns; with
   * `recorded`, its audit record in the same transaction (a takeover, a release: not what is said).
   */
  private async change(
    customerId: string,
    id: string,
    decide: (conversation: ConversationRow) => Change | AppError,
    recorded?: { audit: Audit; entry: AuditEntry },
  ): Promise<void> {
    const found = await findConversation(this.parts.db, id);
    const dep = found?.customer_id === customerId ? await this.parts.deployments.get(found.deployment_id) : undefined;
    if (!dep) throw notFound('Conversation');
    // Refusals are returned from the unit, not thrown: a throw would roll back its whole batch.
    const refused = await this.parts.events.write(id, async (unit) => {
      const conversation = await lockConversation(unit.trx, id);
      if (!conversation) return notFound('Conversation');
      if (conversation.status !== 'open') return invalidState('The conversation has ended');
      const change = decide(conversation);
      if (change instanceof AppError) return change;
      await unit.record({ dep, conversationId: id }, change);
      await recorded?.audit(unit.trx, recorded.entry);
      return undefined;
    });
    if (refused) throw refused;
  }
}
