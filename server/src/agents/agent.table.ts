export type AgentStatus = 'generating' | 'draft' | 'published' | 'failed';

export interface AgentTable {
  id: string;
  customer_id: string;
  name: string;
  description: string | null;
  status: AgentStatus;
  version: number;
  /** Spec objects are stored as JSON text so one schema serves SQLite and PostgreSQL. */
  agent_spec: string | null;
  draft_spec: string | null;
  generated_spec: string | null;
  test_mode_enabled: number;
  project_id: string | null;
  knowledge_base_id: string | null;
  /** Lower-cased name and description: portable case-insensitive search (SQLite lower() is ASCII-only). */
  search_text: string;
  created_at: string;
  updated_at: string;
}

export interface AgentCountTable {
  customer_id: string;
  status: AgentStatus;
  count: number;
}

/** One published `agent_spec`, kept as it was: deployments may pin it, conversations keep it. */
export interface AgentVersionTable {
  agent_id: string;
  version: number;
  agent_spec: string;
  published_at: string;
}
