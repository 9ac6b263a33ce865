import type { DeliveryRow } from './delivery.repository.js';
import type { Role } from '#protocol/roles';
import { urlSeenBy } from '../../shared/seen-by-role.js';
import type { Delivery } from './delivery.schemas.js';

/** A delivery record as the API shows it. */
export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    kind: row.kind,
    deployment_id: row.deployment_id,
    conversation_id: row.conversation_id,
    turn_id: row.turn_id,
    event_id: row.event_id,
    event_type: row.event_type as Delivery['event_type'],
    url: row.url,
    attempt: row.attempt,
    sent_at: row.sent_at,
    duration_ms: row.duration_ms,
    request: JSON.parse(row.request),
    response: row.response === null ? null : JSON.parse(row.response),
    error: row.error,
    error_detail: row.error_detail,
    outcome: row.outcome,
    model_usage:
      row.kind === 'model'
        ? { first_token_ms: row.first_token_ms, tokens_in: row.tokens_in, tokens_out: row.tokens_out }
        : null,
  };
}

/**
 * A delivery record as `role` may read it (README, Your team): the agent role sees where it went
 * as an origin only, and no model call's request body (the agent's instructions and prompt).
 */
export function deliverySeenBy(role: Role): (delivery: Delivery) => Delivery {
  if (role !== 'agent') return (delivery) => delivery;
  return (delivery) => ({
    ...delivery,
    url: urlSeenBy(role, delivery.url),
    request:
      delivery.kind === 'model' ? { headers: delivery.request.headers, body: HIDDEN_FOR_AGENTS } : delivery.request,
  });
}

/** Said in place of what the agent role does not read. */
export const HIDDEN_FOR_AGENTS = '(not shown to the agent role)';
