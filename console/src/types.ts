/**
 * The API's shapes, taken from the server's own schemas (types only: nothing of the server is
 * bundled), so the console cannot drift from what the API sends.
 */
import type { z } from 'zod';
import type { agentSchema, agentSpecSchema, agentVersionSchema } from '../../server/src/agents/agent.schemas.js';
import type {
  apiKeySettingsSchema,
  rotatedApiKeySchema,
  usageSchema,
} from '../../server/src/api-keys/api-key.schemas.js';
import type {
  conversationDetailSchema,
  conversationSchema,
} from '../../server/src/concierge/history/conversation.schemas.js';
import type { deliverySchema } from '../../server/src/concierge/deliveries/delivery.schemas.js';
import type { storedEvent } from '#protocol/frames';
import type { analyticsSchema } from '../../server/src/concierge/analytics/analytics.schemas.js';
import type {
  agentTestSchema,
  expectation,
  testResultSchema,
  testRunSchema,
} from '../../server/src/concierge/quality/agent-test.schemas.js';
import type { Brief } from '../../server/src/concierge/analysis/conversation-brief.js';
import type { diagnosticsSchema } from '../../server/src/concierge/diagnostics/diagnostics.route.js';
import type {
  createdDeploymentSchema,
  deploymentSchema,
  rotatedSecretSchema,
} from '../../server/src/deployments/deployment.schemas.js';
import type { jobAcceptedSchema, jobSchema } from '../../server/src/agents/generation/job.schemas.js';
import type { consoleUserSchema } from '../../server/src/console/console.routes.js';
import type { previewTokenSchema } from '../../server/src/concierge/sessions/preview-token.routes.js';
import type { PageMeta as ServerPageMeta } from '../../server/src/http/envelope.js';
import type { invitationSchema, teamUserSchema } from '../../server/src/teams/user.routes.js';
import type { auditEntrySchema } from '../../server/src/audit/audit.routes.js';
import type { modelResponder } from '../../server/src/agents/agent-responder.js';
import type { singleSignOnSettingsSchema } from '../../server/src/console/single-sign-on-settings.routes.js';
import type { modelEndpointSchema } from '../../server/src/model-endpoints/model-endpoint.schemas.js';
import type {
  chunkSchema,
  documentSchema,
  foundChunkSchema,
  knowledgeBaseSchema,
  retrievalSchema,
} from '../../server/src/knowledge/knowledge.schemas.js';

export type Agent = z.output<typeof agentSchema>;
export type AgentSpecs = z.output<typeof agentSpecSchema>;
export type AgentVersion = z.output<typeof agentVersionSchema>;
export type Job = z.output<typeof jobSchema>;
export type JobAccepted = z.output<typeof jobAcceptedSchema>;
export type Deployment = z.output<typeof deploymentSchema>;
export type CreatedDeployment = z.output<typeof createdDeploymentSchema>;
export type RotatedSecret = z.output<typeof rotatedSecretSchema>;
export type Conversation = z.output<typeof conversationSchema>;
export type ConversationDetail = z.output<typeof conversationDetailSchema>;
export type Turn = ConversationDetail['turns'][number];
export type Delivery = z.output<typeof deliverySchema>;
export type Analytics = z.output<typeof analyticsSchema>;
export type AgentTest = z.output<typeof agentTestSchema>;
export type TestExpectation = z.input<typeof expectation>;
export type TestRun = z.output<typeof testRunSchema>;
export type TestResult = z.output<typeof testResultSchema>;
export type ConversationBrief = Brief;
export type Diagnostics = z.output<typeof diagnosticsSchema>;
export type ApiKeySettings = z.output<typeof apiKeySettingsSchema>;
export type RotatedApiKey = z.output<typeof rotatedApiKeySchema>;
export type Usage = z.output<typeof usageSchema>;
export type ModelEndpoint = z.output<typeof modelEndpointSchema>;
export type KnowledgeBase = z.output<typeof knowledgeBaseSchema>;
export type KnowledgeDocument = z.output<typeof documentSchema>;
export type KnowledgeChunk = z.output<typeof chunkSchema>;
export type FoundChunk = z.output<typeof foundChunkSchema>;
export type Retrieval = z.output<typeof retrievalSchema>;
/** What `POST /api/v1/model-endpoints/{id}/test` answers. */
export interface ModelTest {
  ok: boolean;
  answer: string;
  status: number | null;
  first_token_ms: number | null;
  duration_ms: number;
  error: string | null;
}

export type TeamUser = z.output<typeof teamUserSchema>;
export type Invitation = z.output<typeof invitationSchema>;
export type AuditEntry = z.output<typeof auditEntrySchema>;

export type PageMeta = ServerPageMeta;
/** A console user, or null when nobody is signed in. */
export type ConsoleUser = NonNullable<z.output<typeof consoleUserSchema>>;
export type SingleSignOnSettings = z.output<typeof singleSignOnSettingsSchema>;
export type PreviewToken = z.output<typeof previewTokenSchema>;
/** What a deployment's PUT may add to `meta` (README, Field reference): keys the service does not read. */
export type SaveMeta = { warnings?: { path: string; message: string }[] };
export type StoredEvent = z.output<typeof storedEvent>;
export type Handler = z.output<typeof conversationSchema>['handler'];
/** A model responder as an agent's draft spec holds it (its defaults not yet applied). */
export type ModelResponderDraft = z.input<typeof modelResponder>;
