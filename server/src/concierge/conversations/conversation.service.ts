import { type Audit, auditEntry } from '../../audit/audit-trail.js';
import { AppError, invalidState, notFound } from '../../errors.js';
import { newId } from '../../shared/random.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import { findAgentVersion } from '../../agents/agent-version.repository.js';
import {
  agentInfo,
  type DeploymentContext,
  type DeploymentDirectory,
  greetingIn,
} from '../../deployments/deployment-context.js';
import type { ConversationAt, EventRecorder, UnitOfWork } from '../events/event.recorder.js';
import type { AgentInfo, EndReason } from '#protocol/frames';
import { keepsWords } from '../privacy/keeping.js';
import { turnLifecycle } from './turn.lifecycle.js';
import { versionFor } from '../../deployments/version-split.js';
import { joined } from './turn-moves.js';
import { conversationValues, withGreetingFilled } from './conversation-variables.js';
import {
  conversationsStartedSince,
  type ConversationRow,
  deleteConversations,
  findConversation,
  insertConversation,
  lockConversation,
  openConversationIds,
  queueAnalysisOfEnded,
} from './conversation.repository.js';

const NEW_CONVERSATION_WINDOW_MS = 10 * 60_000;

/** Who a conversation is with: the user token's claims. */
export interface ConversationUser {
  sub: string;
  name?: string | undefined;
  ctx?: Record<string, unknown> | undefined;
  preview?: true | undefined;
}

/** A test run's conversation (README, Tests and analysis): its run, the tool answers it mocks, the version it runs (null: the draft). */
export interface TestOf {
  runId: string;
  mocks: Record<string, unknown>;
  version: number | null;
}

/** The lifecycle of conversations: who may start one, who may resume it, and how it ends. */
export class ConversationService {
  constructor(private readonly parts: { db: Db; deployments: DeploymentDirectory; events: EventRecorder }) {}

  /**
   * Starts a conversation for the token's user; `outbound` stores the greeting as its first event,
   * in the `language` the visitor chose (else the agent's).
   * Refused (`rate_limited`) when the user has started `perTenMinutes` on this deployment in the
   * last 10 minutes: each start costs the customer's server a conversation, so one token may not
   * mint them freely.
   */
  async start(
    dep: DeploymentContext,
    claims: ConversationUser,
    perTenMinutes: number,
    language?: string,
    test?: TestOf,
  ): Promise<ConversationRow> {
    const now = isoNow();
    const version = test ? test.version : (versionFor(dep.versions, dep.id, claims.sub) ?? dep.spec.version);
    const row: ConversationRow = {
      id: newId(),
      customer_id: dep.customerId,
      deployment_id: dep.id,
      agent_id: dep.agentId,
      user_sub: claims.sub,
      user_name: claims.name ?? null,
      user_ctx: claims.ctx ? JSON.stringify(claims.ctx) : null,
      status: 'open',
      end_reason: null,
      ended_at: null,
      agent_version: version,
      last_seq: 0,
      turn_count: 0,
      handler: 'agent',
      handler_name: null,
      needs_person: 0,
      handoff_reason: null,
      handoff_at: null,
      preview: claims.preview ? 1 : 0,
      wait_told_at: null,
      page_context: null,
      proactive_rule: null,
      page_event_at: null,
      tool_confirmation: null,
      test_run_id: test?.runId ?? null,
      test_mocks: test && Object.keys(test.mocks).length ? JSON.stringify(test.mocks) : null,
      created_at: now,
      updated_at: now,
    };
    // The greeting of the version the conversation gets (README, Tests and analysis: versions side by side).
    const greeting =
      dep.callDirection === 'outbound'
        ? greetingIn(
            withGreetingFilled(
              await this.agentOf(dep, { agent_version: version }),
              conversationValues({ conversation: row, language: language ?? dep.agent.language, now: new Date() }),
            ),
            language,
          ) || null
        : null;
    // Keyed by the user, not the new id: one user's starts on this node are counted one at a time.
    // A refusal is returned, not thrown, from the unit: a throw would roll back its whole batch.
    const started = await this.parts.events.write(`start:${dep.id}:${claims.sub}`, async (unit) => {
      if (
        (await conversationsStartedSince(unit.trx, dep.id, claims.sub, isoIn(-NEW_CONVERSATION_WINDOW_MS))) >=
        perTenMinutes
      ) {
        return new AppError(
          'rate_limited',
          `At most ${perTenMinutes} new conversations per user every 10 minutes; resume an open one instead`,
        );
      }
      await insertConversation(unit.trx, row);
      await unit.record(
        { dep, conversationId: row.id },
        {
          events: greeting ? [{ type: 'greeting', text: greeting }] : [],
          transcript: [
            {
              type: 'conversation.started',
              data: { user: { sub: claims.sub, name: claims.name ?? null }, call_direction: dep.callDirection },
            },
          ],
          tally: { conversations: 1, visitor: claims.sub },
        },
      );
      return { ...row, last_seq: greeting ? 1 : 0 };
    });
    if (started instanceof AppError) throw started;
    return started;
  }

  /** The conversation a user resumes: one of this deployment's, and their own. */
  async resume(dep: DeploymentContext, conversationId: string, sub: string): Promise<ConversationRow> {
    const conversation = await findConversation(this.parts.db, conversationId);
    if (!conversation || conversation.deployment_id !== dep.id) throw new AppError('not_found', 'unknown conversation');
    if (conversation.user_sub !== sub) throw new AppError('forbidden', "another user's conversation");
    return conversation;
  }

  /** The agent as this conversation knows it: the version it started with, whatever the deployment is pinned to now. */
  async agentOf(dep: DeploymentContext, conversation: Pick<ConversationRow, 'agent_version'>): Promise<AgentInfo> {
    if (conversation.agent_version === null || conversation.agent_version === dep.spec.version) return dep.agent;
    const version = await findAgentVersion(this.parts.db, dep.agentId, conversation.agent_version);
    return version ? agentInfo(dep.agent.name, version.agent_spec) : dep.agent;
  }

  /** Ends the conversation if it is open; false when it is gone (erased). */
  async end(dep: DeploymentContext, conversationId: string, reason: EndReason): Promise<boolean> {
    return this.parts.events.write(conversationId, async (unit) => {
      const conversation = await lockConversation(unit.trx, conversationId);
      if (conversation?.status === 'open') await this.endWithin(unit, { dep, conversationId }, reason);
      return conversation !== undefined;
    });
  }

  /** A hands-free visitor went quiet (README, Hands-free voice): the agent asks once if they are still there, in an open conversation. */
  async reengage(dep: DeploymentContext, conversationId: string, text: string): Promise<void> {
    await this.parts.events.write(conversationId, async (unit) => {
      const conversation = await lockConversation(unit.trx, conversationId);
      if (conversation?.status === 'open')
        await unit.record({ dep, conversationId }, { events: [{ type: 'reengaged', text }], transcript: [] });
    });
  }

  /**
   * Erases a conversation with everything of it: turns, events, delivery records and transcript
   * events not yet sent (a person's right to erasure). An open one first ends (`deleted`), in the
   * same transaction, so its sockets here are told and closed; sockets on other nodes find it gone.
   */
  async erase(customerId: string, id: string, audit: Audit): Promise<{ id: string; deleted: true }> {
    const dep = await this.deploymentOf(customerId, id);
    const erased = await this.parts.events.write(id, async (unit) => {
      const locked = await lockConversation(unit.trx, id);
      if (!locked) return false;
      if (locked.status === 'open') await this.endWithin(unit, { dep, conversationId: id }, 'deleted');
      await deleteConversations(unit.trx, [id]);
      await audit(unit.trx, auditEntry('conversation.deleted', id));
      return true;
    });
    if (!erased) throw notFound('Conversation');
    return { id, deleted: true };
  }

  /**
   * A person closes an open conversation from the inbox (README, A person in the conversation): it
   * ends with `closed`, its waiting turns fail, and the visitor's widget says the team closed it.
   */
  async close(customerId: string, id: string, audit: Audit): Promise<void> {
    const dep = await this.deploymentOf(customerId, id);
    // A refusal is returned from the unit, not thrown: a throw would roll back its whole batch.
    const refused = await this.parts.events.write(id, async (unit) => {
      const locked = await lockConversation(unit.trx, id);
      if (!locked) return notFound('Conversation');
      if (locked.status !== 'open') return invalidState('The conversation has already ended');
      await this.endWithin(unit, { dep, conversationId: id }, 'closed');
      await audit(unit.trx, auditEntry('conversation.closed', id, { changes: ['status'] }));
      return undefined;
    });
    if (refused) throw refused;
  }

  /** The deployment of one of this customer's conversations; 404 for anyone else's. */
  private async deploymentOf(customerId: string, id: string): Promise<DeploymentContext> {
    const conversation = await findConversation(this.parts.db, id);
    const dep =
      conversation?.customer_id === customerId
        ? await this.parts.deployments.get(conversation.deployment_id)
        : undefined;
    if (!dep) throw notFound('Conversation');
    return dep;
  }

  /** Ends an open conversation inside the caller's unit of work: its waiting turns fail first (see turnLifecycle.failOpen). */
  async endWithin(unit: UnitOfWork, at: ConversationAt, reason: EndReason): Promise<void> {
    const turnsFailed = await turnLifecycle.failOpen(unit, at.conversationId);
    const ended = {
      events: [{ type: 'conversation_ended' as const, reason }],
      transcript: [{ type: 'conversation.ended' as const, data: { reason } }],
    };
    await unit.record(at, {
      ...joined(turnsFailed, ended),
      conversation: { status: 'ended', end_reason: reason, ended_at: isoNow() },
    });
    // Queued only where an agent asks for an analysis (with a split, a conversation's version may) and words are kept.
    const analysed = (at.dep.spec.analysis !== undefined || at.dep.versions.length > 0) && keepsWords(at.dep);
    if (reason !== 'deleted' && analysed) await queueAnalysisOfEnded(unit.trx, at.conversationId, isoNow());
  }

  /** After any management change to a deployment: read it afresh, and end its conversations if it is no longer active. */
  async deploymentChanged(id: string): Promise<void> {
    const dep = await this.parts.deployments.fresh(id);
    if (dep?.status !== 'inactive') return;
    for (const conversationId of await openConversationIds(this.parts.db, id))
      await this.end(dep, conversationId, 'deployment_inactive');
  }
}
