import { type Audit, auditEntry } from '../../audit/audit-trail.js';
import { invalidState, notFound } from '../../errors.js';
import { type Page, pageOf } from '../../http/pagination.js';
import { newId } from '../../shared/random.js';
import { isoNow } from '../../shared/time.js';
import type { PublicAddress } from '../../http/public-address.js';
import type { Db } from '../../database.js';
import type { DeploymentContext, DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { EgressPolicy, Exchange } from '../../shared/egress.js';
import { transcriptEventBody } from '#protocol/transcript-events';
import { newEventId } from './event-id.js';
import { reviveDeadEvent } from './outbox.repository.js';
import { sendTranscriptEvent, TRANSCRIPT_TIMEOUT_MS, transcriptSubject } from './transcript.outbox.js';
import { sendTurnCreated } from './hook.client.js';
import { type DeliverySubject, deliveryRow } from './delivery.record.js';
import { ManualSendLimit } from './manual-send-limit.js';
import {
  type DeliveryRow,
  findDelivery,
  insertDeliveries,
  listDeliveries,
  nextEventAttempt,
} from './delivery.repository.js';
import type { Delivery, DeliveryFilter } from './delivery.schemas.js';
import { toDelivery } from './delivery.view.js';

export interface DeliveryServiceParts {
  db: Db;
  deployments: DeploymentDirectory;
  egress: EgressPolicy;
  /** Base of the sample's `reply_url`. */
  address: PublicAddress;
}

/** What the service sent to a customer, and sending it again: the record of every delivery, redelivery and test-hook. */
export class DeliveryService {
  readonly #manualSends: ManualSendLimit;

  constructor(private readonly parts: DeliveryServiceParts) {
    this.#manualSends = new ManualSendLimit(parts.db);
  }

  async list(customerId: string, filter: DeliveryFilter, page: Page) {
    return pageOf(page, await listDeliveries(this.parts.db, customerId, filter, page), toDelivery);
  }

  async get(customerId: string, id: string): Promise<Delivery> {
    return toDelivery(await this.require(customerId, id));
  }

  /**
   * Sends a transcript event again now, whatever its state, outside its conversation's ordered
   * queue: the same body (the same `id`), signed afresh. A dead event that this reaches is
   * delivered. A turn's hook call is never sent again: the visitor asks again, as a new turn.
   */
  async redeliver(customerId: string, id: string, audit: Audit): Promise<Delivery> {
    const original = await this.require(customerId, id);
    if (original.kind === 'turn_hook')
      throw invalidState(
        "A turn's hook call is not redelivered: a failed turn is asked again by the visitor, as a new turn",
      );
    if (original.kind === 'test')
      throw invalidState('A test is not redelivered: send another with POST /api/v1/deployments/{id}/test-hook');
    const dep = await this.parts.deployments.fresh(original.deployment_id);
    const url = dep?.hook.transcriptUrl;
    if (!dep || !url) throw invalidState('The deployment has no channel_config.transcript_hook_url to send it to');
    const recordId = await this.#manualSends.take(dep.id);
    const event = {
      id: original.event_id!,
      deployment_id: original.deployment_id,
      conversation_id: original.conversation_id!,
      body: (JSON.parse(original.request) as { body: string }).body,
    };
    const sent = await sendTranscriptEvent(dep, url, event.id, event.body, TRANSCRIPT_TIMEOUT_MS, this.parts.egress);
    const record = deliveryRow(
      transcriptSubject(
        customerId,
        event,
        await nextEventAttempt(this.parts.db, event.conversation_id, event.id),
        'transcript',
      ),
      sent,
      recordId,
    );
    await this.parts.db.transaction().execute(async (trx) => {
      await insertDeliveries(trx, [record]);
      if (record.outcome === 'succeeded') await reviveDeadEvent(trx, event.id);
      await audit(trx, auditEntry('delivery.redelivered', id));
    });
    return toDelivery(record);
  }

  /**
   * Sends a signed sample to the deployment's hook or transcript URL, exactly as a real call but
   * marked `"test": true` with ids that match nothing, and returns what happened, whatever the
   * customer answered.
   */
  async testHook(customerId: string, deploymentId: string, target: 'hook' | 'transcript'): Promise<Delivery> {
    const dep = await this.parts.deployments.owned(customerId, deploymentId);
    const url = target === 'hook' ? dep.hook.url : dep.hook.transcriptUrl;
    if (!url)
      throw invalidState(
        `The deployment has no channel_config.${target === 'hook' ? 'hook_url' : 'transcript_hook_url'} to test`,
      );
    const recordId = await this.#manualSends.take(deploymentId);
    const { sent, subject } = target === 'hook' ? await this.sampleTurn(dep, url) : await this.sampleEvent(dep, url);
    const record = deliveryRow(subject, sent, recordId);
    await insertDeliveries(this.parts.db, [record]);
    return toDelivery(record);
  }

  private async sampleTurn(dep: DeploymentContext, url: string): Promise<{ sent: Exchange; subject: DeliverySubject }> {
    const sample = {
      delivery_id: newId(),
      deployment_id: dep.id,
      agent_id: dep.agentId,
      conversation_id: newId(),
      turn_id: newId(),
      user: { sub: 'test-visitor', name: 'Test visitor', ctx: null },
      text: 'This is a test turn sent from test-hook. Is the hook reachable?',
      mode: 'text' as const,
      language: dep.agent.language,
      reply_url: `${this.parts.address.url}/embed/concierge/${dep.id}/replies`,
      page: { url: 'https://example.com/', title: 'A test page', context: null, events: [] },
    };
    const sent = await sendTurnCreated(dep, url, sample, this.parts.egress, { mark: 'test' });
    return {
      sent,
      subject: {
        kind: 'test',
        customerId: dep.customerId,
        deploymentId: dep.id,
        conversationId: null,
        turnId: null,
        eventId: null,
        eventType: 'turn.created',
        attempt: 1,
      },
    };
  }

  private async sampleEvent(
    dep: DeploymentContext,
    url: string,
  ): Promise<{ sent: Exchange; subject: DeliverySubject }> {
    const id = newEventId();
    const data = { user: { sub: 'test-visitor', name: 'Test visitor' }, call_direction: dep.callDirection };
    const body = transcriptEventBody(
      { id, type: 'conversation.started', created_at: isoNow(), deployment_id: dep.id, conversation_id: newId(), data },
      'test',
    );
    const sent = await sendTranscriptEvent(dep, url, id, body, dep.hook.timeoutMs, this.parts.egress);
    return {
      sent,
      subject: transcriptSubject(dep.customerId, { id, deployment_id: dep.id, conversation_id: '', body }, 1, 'test'),
    };
  }

  private async require(customerId: string, id: string): Promise<DeliveryRow> {
    const row = await findDelivery(this.parts.db, customerId, id);
    if (!row) throw notFound('Delivery');
    return row;
  }
}
