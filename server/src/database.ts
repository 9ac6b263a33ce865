import type { Kysely, Transaction } from 'kysely';
import type { AgentCountTable, AgentTable, AgentVersionTable } from './agents/agent.table.js';
import type { ApiKeyTable, UsageDailyTable } from './api-keys/api-key.table.js';
import type {
  AnalyticsHourTable,
  AnalyticsLatencyTable,
  AnalyticsProactiveTable,
  AnalyticsVisitorTable,
} from './concierge/analytics/analytics.table.js';
import type { ConversationTable, ReplyPartTable, TurnTable } from './concierge/conversations/conversation.table.js';
import type { DeploymentDiagnosticTable } from './concierge/diagnostics/diagnostics.table.js';
import type { DeliveryTable } from './concierge/deliveries/delivery.table.js';
import type { ConversationEventTable } from './concierge/events/event.table.js';
import type { TranscriptOutboxTable } from './concierge/deliveries/outbox.table.js';
import type {
  ConsoleIdentityTable,
  ConsoleSessionTable,
  ConsoleSignInFailureTable,
  ConsoleSingleSignOnTable,
  ConsoleUserTable,
} from './console/console.table.js';
import type { CustomerTable } from './customers/customer.table.js';
import type { DeploymentTable } from './deployments/deployment.table.js';
import type { IdempotencyKeyTable } from './idempotency/idempotency.table.js';
import type { JobTable } from './agents/generation/job.table.js';
import type { AgentTestRunTable, AgentTestTable } from './concierge/quality/agent-test.table.js';
import type { ConversationAnalysisTable, ConversationAnalysisValueTable } from './concierge/analysis/analysis.table.js';
import type { ServiceNodeTable } from './nodes/node.table.js';
import type { ModelEndpointTable } from './model-endpoints/model-endpoint.table.js';
import type { AuditLogTable } from './audit/audit.table.js';
import type { KnowledgeBaseTable, KnowledgeChunkTable, KnowledgeDocumentTable } from './knowledge/knowledge.table.js';

export interface ServiceFlagTable {
  name: string;
  created_at: string;
}

/**
 * The store's schema as Kysely types it, composed from each feature's tables: at the root beside
 * `app.ts` because every folder builds on it and it names every folder's tables (README, Layout).
 */
export interface Database {
  customers: CustomerTable;
  api_keys: ApiKeyTable;
  usage_daily: UsageDailyTable;
  agents: AgentTable;
  agent_versions: AgentVersionTable;
  agent_counts: AgentCountTable;
  jobs: JobTable;
  agent_tests: AgentTestTable;
  agent_test_runs: AgentTestRunTable;
  conversation_analyses: ConversationAnalysisTable;
  conversation_analysis_values: ConversationAnalysisValueTable;
  deployments: DeploymentTable;
  service_flags: ServiceFlagTable;
  conversations: ConversationTable;
  conversation_events: ConversationEventTable;
  turns: TurnTable;
  reply_parts: ReplyPartTable;
  transcript_outbox: TranscriptOutboxTable;
  deliveries: DeliveryTable;
  idempotency_keys: IdempotencyKeyTable;
  console_users: ConsoleUserTable;
  console_sessions: ConsoleSessionTable;
  console_identities: ConsoleIdentityTable;
  console_single_sign_on: ConsoleSingleSignOnTable;
  console_sign_in_failures: ConsoleSignInFailureTable;
  audit_log: AuditLogTable;
  analytics_hours: AnalyticsHourTable;
  analytics_latency: AnalyticsLatencyTable;
  analytics_visitors: AnalyticsVisitorTable;
  analytics_proactive: AnalyticsProactiveTable;
  deployment_diagnostics: DeploymentDiagnosticTable;
  service_nodes: ServiceNodeTable;
  model_endpoints: ModelEndpointTable;
  knowledge_bases: KnowledgeBaseTable;
  knowledge_documents: KnowledgeDocumentTable;
  knowledge_chunks: KnowledgeChunkTable;
}

export type Db = Kysely<Database>;

/** A transaction: what a function that must run inside one takes, so a bare connection does not compile. */
export type Trx = Transaction<Database>;
