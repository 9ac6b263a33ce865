export const deliveryKinds = ['turn_hook', 'transcript', 'test', 'model', 'tool'] as const;
export type DeliveryKind = (typeof deliveryKinds)[number];
export const deliveryErrors = ['timeout', 'network', 'egress_refused', 'invalid_answer'] as const;
export type DeliveryError = (typeof deliveryErrors)[number];
export const deliveryOutcomes = ['succeeded', 'failed'] as const;
export type DeliveryOutcome = (typeof deliveryOutcomes)[number];

/** One outbound HTTP attempt, as sent and as answered (README, The management API). */
export interface DeliveryTable {
  id: string;
  customer_id: string;
  deployment_id: string;
  conversation_id: string | null;
  turn_id: string | null;
  event_id: string | null;
  kind: DeliveryKind;
  event_type: string;
  url: string;
  attempt: number;
  sent_at: string;
  duration_ms: number;
  /** JSON text of `{headers, body}` as sent. */
  request: string;
  /** JSON text of `{status, headers, body, truncated}`, or null when no answer came. */
  response: string | null;
  error: DeliveryError | null;
  /** Why the attempt failed, in words: the network's message, or what was wrong with a 2xx answer. */
  error_detail: string | null;
  outcome: DeliveryOutcome;
  /** A model call's (README, An agent without a server): ms to its first token, and the tokens it read and wrote as it reported them. */
  first_token_ms: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  /** 1 when the customer asked for it (test-hook, redeliver): those count against one per-deployment limit. */
  manual: 0 | 1;
}
