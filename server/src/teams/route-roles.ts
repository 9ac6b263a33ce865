import { AppError } from '../errors.js';
import type { Principal } from '../http/principal.js';
import { type Role, reaches } from '#protocol/roles';

/**
 * The least role each management route needs (README, Your team), by its OpenAPI operationId: the
 * one place to read who may do what. A route missing here is refused to everyone, and
 * `teams.test.ts` fails until it is added.
 */
export const ROUTE_ROLES: Readonly<Record<string, Role>> = {
  // Answering visitors: the inbox, conversations and their deliveries, analytics; the names of
  // agents and deployments they are shown with.
  streamActivity: 'agent',
  listConversations: 'agent',
  getConversation: 'agent',
  getConversationBrief: 'agent',
  exportConversations: 'agent',
  takeOverConversation: 'agent',
  releaseConversation: 'agent',
  closeConversation: 'agent',
  answerTurn: 'agent',
  writeMessage: 'agent',
  listDeliveries: 'agent',
  getDelivery: 'agent',
  getAnalytics: 'agent',
  listAgents: 'agent',
  getAgent: 'agent',
  listDeployments: 'agent',
  getDeployment: 'agent',
  // Building: agents, deployments, knowledge, model endpoints, trying them.
  createAgent: 'editor',
  updateAgent: 'editor',
  deleteAgent: 'editor',
  publishAgent: 'editor',
  getAgentSpec: 'editor',
  getAgentGenerationStatus: 'editor',
  listAgentVersions: 'editor',
  getAgentVersion: 'editor',
  listAgentTests: 'editor',
  createAgentTest: 'editor',
  getAgentTest: 'editor',
  updateAgentTest: 'editor',
  deleteAgentTest: 'editor',
  runAgentTests: 'editor',
  listAgentTestRuns: 'editor',
  getAgentTestRun: 'editor',
  getJobStatus: 'editor',
  sampleAgentVoice: 'editor',
  createDeployment: 'editor',
  updateDeployment: 'editor',
  deleteDeployment: 'editor',
  activateDeployment: 'editor',
  deactivateDeployment: 'editor',
  rotateDeploymentSecret: 'editor',
  enableTranscriptHook: 'editor',
  getDeploymentDiagnostics: 'editor',
  mintPreviewToken: 'editor',
  testDeploymentHook: 'editor',
  redeliverDelivery: 'editor',
  deleteConversation: 'editor',
  createModelEndpoint: 'editor',
  listModelEndpoints: 'editor',
  getModelEndpoint: 'editor',
  updateModelEndpoint: 'editor',
  deleteModelEndpoint: 'editor',
  testModelEndpoint: 'editor',
  createKnowledgeBase: 'editor',
  listKnowledgeBases: 'editor',
  getKnowledgeBase: 'editor',
  updateKnowledgeBase: 'editor',
  deleteKnowledgeBase: 'editor',
  searchKnowledgeBase: 'editor',
  addKnowledgeDocument: 'editor',
  listKnowledgeDocuments: 'editor',
  getKnowledgeDocument: 'editor',
  updateKnowledgeDocument: 'editor',
  refreshKnowledgeDocument: 'editor',
  deleteKnowledgeDocument: 'editor',
  listKnowledgeChunks: 'editor',
  // Holding the keys: the API key, the team, the audit log.
  getApiKey: 'admin',
  getApiKeyUsage: 'admin',
  rotateApiKey: 'admin',
  listUsers: 'admin',
  inviteUser: 'admin',
  updateUser: 'admin',
  removeUser: 'admin',
  listAuditLog: 'admin',
  exportAuditLog: 'admin',
  getSingleSignOn: 'admin',
  // Whom an identity provider may sign in as anyone of the team, owners included: an owner's to say.
  updateSingleSignOn: 'owner',
};

/** Refuses a caller whose role does not reach the route's: `403 forbidden`, naming the role needed. */
export function permit(operationId: string, principal: Principal): void {
  const needed = ROUTE_ROLES[operationId];
  if (!needed) throw new AppError('forbidden', `${operationId} is open to no role`);
  if (!reaches(principal.role, needed))
    throw new AppError('forbidden', `This needs the ${needed} role or above; you are an ${principal.role}`);
}
