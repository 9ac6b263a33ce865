import type { DeliveryRow } from './delivery.repository.js';
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
