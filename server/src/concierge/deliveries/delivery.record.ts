import { newId } from '../../shared/random.js';
import type { Exchange } from '../../shared/egress.js';
import type { DeliveryKind, DeliveryTable } from './delivery.table.js';

/** What an outbound call was about: who it was for and which attempt it was. */
export interface DeliverySubject {
  kind: DeliveryKind;
  customerId: string;
  deploymentId: string;
  conversationId: string | null;
  turnId: string | null;
  eventId: string | null;
  eventType: string;
  attempt: number;
}

/** A customer's answer is kept up to this much: enough to read an error page, not to store a download. */
const KEPT_BODY_BYTES = 4096;

/** The first {@link KEPT_BODY_BYTES} of a body, cut on a character boundary. */
function keptBody(body: string, bytes: number): { body: string; truncated: boolean } {
  if (bytes <= KEPT_BODY_BYTES && Buffer.byteLength(body) <= KEPT_BODY_BYTES) return { body, truncated: false };
  // A character cut in half decodes as U+FFFD at the end; it is dropped, not shown.
  return {
    body: Buffer.from(body)
      .subarray(0, KEPT_BODY_BYTES)
      .toString('utf8')
      .replace(/\uFFFD$/, ''),
    truncated: true,
  };
}

/**
 * The record of one attempt: any 2xx answer is a success, everything else (no answer included) a
 * failure. `manualSendId`: the id a send the customer asked for was allowed under (see
 * ManualSendLimit); its record carries it and counts against that limit.
 */
export function deliveryRow(subject: DeliverySubject, ex: Exchange, manualSendId?: string): DeliveryTable {
  const res = ex.response;
  return {
    id: manualSendId ?? newId(),
    manual: manualSendId ? 1 : 0,
    customer_id: subject.customerId,
    deployment_id: subject.deploymentId,
    conversation_id: subject.conversationId,
    turn_id: subject.turnId,
    event_id: subject.eventId,
    kind: subject.kind,
    event_type: subject.eventType,
    url: ex.url,
    attempt: subject.attempt,
    sent_at: ex.sentAt,
    duration_ms: ex.durationMs,
    request: JSON.stringify(ex.request),
    response: res
      ? JSON.stringify({ status: res.status, headers: res.headers, ...keptBody(res.body, res.bytes) })
      : null,
    error: ex.error?.kind ?? null,
    error_detail: ex.error?.message ?? null,
    outcome: res && res.status >= 200 && res.status < 300 ? 'succeeded' : 'failed',
    first_token_ms: null,
    tokens_in: null,
    tokens_out: null,
  };
}

/**
 * A record of a call about a conversation as its deployment keeps what was said (README, Privacy:
 * what is kept): the bodies sent and answered through `keep`, the rest as it was.
 */
export function keptBodies(row: DeliveryTable, keep: (text: string) => string): DeliveryTable {
  const kept = (json: string) => {
    const message = JSON.parse(json) as { body?: unknown };
    return typeof message.body === 'string' ? JSON.stringify({ ...message, body: keep(message.body) }) : json;
  };
  return { ...row, request: kept(row.request), response: row.response === null ? null : kept(row.response) };
}

/** The record of a 2xx answer the service could not read as one (a reply with invalid actions, say): a failure, and why. */
export const unreadableAnswer = (row: DeliveryTable, why: string): DeliveryTable => ({
  ...row,
  error: 'invalid_answer',
  error_detail: why,
  outcome: 'failed',
});
