export const analysisStatuses = ['queued', 'running', 'done', 'skipped', 'failed'] as const;
export type AnalysisStatus = (typeof analysisStatuses)[number];

/**
 * A conversation's analysis (README, Tests and analysis), queued when it ends or has been quiet 30
 * minutes, and claimed with a lease like agent generation's jobs: a node that dies mid-analysis
 * leaves it to the next.
 */
export interface ConversationAnalysisTable {
  conversation_id: string;
  customer_id: string;
  agent_id: string;
  agent_version: number | null;
  status: AnalysisStatus;
  attempts: number;
  lease_expires_at: string | null;
  due_at: string;
  /** JSON `{summary, fields, criteria, at}` once done. */
  analysis: string | null;
  /** Why it failed, or was skipped. */
  error: string | null;
  updated_at: string;
}

/** One criterion's result or one field's value of an analysis, so the history filters on it and analytics counts it. */
export interface ConversationAnalysisValueTable {
  conversation_id: string;
  customer_id: string;
  agent_id: string;
  agent_version: number | null;
  kind: 'criterion' | 'field';
  name: string;
  value: string;
  analyzed_at: string;
}
