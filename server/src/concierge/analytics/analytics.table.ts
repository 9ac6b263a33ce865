/** The counts of one deployment's hour (README, Knowing how it goes), kept as they happen. */
export interface AnalyticsHourTable {
  deployment_id: string;
  hour: string;
  customer_id: string;
  agent_id: string;
  conversations: number;
  turns: number;
  failed_hook_rejected: number;
  failed_hook_failed: number;
  failed_reply_timeout: number;
  failed_conversation_ended: number;
  failed_model_failed: number;
  handoffs: number;
  feedback_up: number;
  feedback_down: number;
  /** Values taken out of what was said before it was stored (README, Privacy: what is kept). */
  redacted_email: number;
  redacted_phone: number;
  redacted_card: number;
  redacted_iban: number;
  redacted_name: number;
  redacted_address: number;
  guardrail_refuse: number;
  guardrail_retry: number;
  guardrail_hand_off: number;
  guardrail_flagged: number;
}

/** How many of an hour's measurements fell in one bin of a latency (bins grow by 10%: see latency-bins.ts). */
export interface AnalyticsLatencyTable {
  deployment_id: string;
  hour: string;
  metric: LatencyMetric;
  bin: number;
  customer_id: string;
  agent_id: string;
  count: number;
}

/** The visitors of an hour, each once, as a digest of the customer and the token's `sub`. */
export interface AnalyticsVisitorTable {
  deployment_id: string;
  hour: string;
  visitor: string;
  customer_id: string;
  agent_id: string;
}

/** A greeting rule's figures of an hour (README, Greeting visitors first). */
export interface AnalyticsProactiveTable {
  deployment_id: string;
  hour: string;
  rule_id: string;
  customer_id: string;
  agent_id: string;
  shown: number;
  opened: number;
  conversations: number;
  turns: number;
}

/** The rollup rows one transaction adds to, each once. */
export interface RollupRows {
  hours: Map<string, AnalyticsHourTable>;
  latency: Map<string, AnalyticsLatencyTable>;
  visitors: Map<string, AnalyticsVisitorTable>;
  proactive: Map<string, AnalyticsProactiveTable>;
}

export const latencyMetrics = ['hook', 'reply', 'first_part', 'recognition', 'voice_to_voice'] as const;
export type LatencyMetric = (typeof latencyMetrics)[number];
