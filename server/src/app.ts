import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { agentRoutes } from './agents/agent.routes.js';
import { agentTestRoutes } from './concierge/quality/agent-test.routes.js';
import { AgentTestService } from './concierge/quality/agent-test.service.js';
import { TestRunner } from './concierge/quality/test-runner.js';
import { EvaluationModels } from './concierge/models/evaluation-model.js';
import { PersonalValueFinder } from './concierge/models/personal-values.js';
import { KnownValues } from './concierge/privacy/known-values.js';
import { AnalysisRunner, type AnalysisRunnerSettings } from './concierge/analysis/analysis.runner.js';
import { briefRoute } from './concierge/analysis/brief.route.js';
import { ConversationBriefs } from './concierge/analysis/conversation-brief.js';
import { ApiKeyAuthenticator, bearerKey } from './api-keys/api-key.authenticator.js';
import { apiKeyRoutes } from './api-keys/api-key.routes.js';
import { UsageRecorder } from './api-keys/usage.recorder.js';
import { closeServer, listen, managementAccess } from './app-server.js';
import type { Config } from './config.js';
import { ConsoleAccounts } from './console/console-accounts.js';
import { consoleSession } from './console/console-credential.js';
import { consoleStatic, serviceFavicon } from './console/console-static.js';
import { consoleRoutes } from './console/console.routes.js';
import { SingleSignOn } from './console/single-sign-on.js';
import { ssoRoutes } from './console/sso.routes.js';
import { PasswordHasher } from './console/password-hasher.js';
import { ConversationHistory } from './concierge/history/conversation-history.js';
import { conversationRoutes } from './concierge/history/conversation.routes.js';
import { ConversationService } from './concierge/conversations/conversation.service.js';
import { SearchIndex } from './concierge/history/search-index.js';
import { deliveryRoutes } from './concierge/deliveries/delivery.routes.js';
import { DeliveryService } from './concierge/deliveries/delivery.service.js';
import { TranscriptOutbox } from './concierge/deliveries/transcript.outbox.js';
import { DeploymentDirectory } from './deployments/deployment-context.js';
import { type ConversationBus, LocalBus } from './concierge/events/conversation-bus.js';
import { AnalyticsRollup } from './concierge/analytics/analytics.rollup.js';
import { analyticsRoutes } from './concierge/analytics/analytics.routes.js';
import { AnalyticsService } from './concierge/analytics/analytics.service.js';
import { diagnosticsRoute } from './concierge/diagnostics/diagnostics.route.js';
import { InstallDiagnostics } from './concierge/diagnostics/install-diagnostics.js';
import type { SpeechLimits } from './concierge/speech/speech-budget.js';
import { voiceSampleRoute } from './concierge/speech/voice-sample.routes.js';
import { NodeHeartbeat } from './nodes/node-heartbeat.js';
import { EventRecorder } from './concierge/events/event.recorder.js';
import { countOpenConversations } from './concierge/conversations/conversation.repository.js';
import { outboxBacklog } from './concierge/deliveries/outbox.repository.js';
import { metricsRoute } from './metrics/metrics.route.js';
import { requestMetrics } from './metrics/request-metrics.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { storedFrames } from './concierge/events/event.repository.js';
import { PgBus } from './concierge/events/pg-bus.js';
import { SESSION_DEFAULTS, SessionGateway } from './concierge/sessions/session.gateway.js';
import { replyRoutes } from './concierge/turns/reply.routes.js';
import { peopleRoutes } from './concierge/turns/people.routes.js';
import { ActivityHub } from './concierge/activity/activity.hub.js';
import { ACTIVITY_DEFAULTS } from './concierge/activity/activity-settings.js';
import { ACTIVITY_RECHECK_MS, activityRoutes } from './concierge/activity/activity.routes.js';
import { ConversationHandling } from './concierge/conversations/handling.js';
import { ReplyService } from './concierge/turns/reply.service.js';
import { TURN_DEFAULTS, TurnService } from './concierge/turns/turn.service.js';
import { ConversationSpecs } from './concierge/conversations/conversation-spec.js';
import { deploymentRoutes } from './deployments/deployment.routes.js';
import { modelEndpointRoutes } from './model-endpoints/model-endpoint.routes.js';
import { ModelEndpointService } from './model-endpoints/model-endpoint.service.js';
import { secretsKeys } from './shared/secrets-key.js';
import { HookResponder } from './concierge/turns/hook-responder.js';
import type { Responders } from './concierge/turns/responder.js';
import { ModelResponder } from './concierge/models/model-responder.js';
import { PerKeyCap } from './shared/per-key-cap.js';
import { PageService } from './concierge/pages/page.service.js';
import { KnowledgeResponder } from './concierge/knowledge/knowledge-responder.js';
import { modelEndpointTestRoute } from './concierge/models/endpoint-test.routes.js';
import { knowledgeRoutes } from './knowledge/knowledge.routes.js';
import { openKnowledge } from './knowledge/knowledge.wiring.js';
import { openSpeech } from './concierge/speech/speech.wiring.js';
import { turnUpkeep } from './concierge/turns/turn.upkeep.js';
import { DeploymentService } from './deployments/deployment.service.js';
import { previewTokenRoute } from './concierge/sessions/preview-token.routes.js';
import { credentialCheck } from './http/auth.js';
import { httpServer, lastResponsePerConnection } from './http/http-server.js';
import { noStore } from './http/no-store.js';
import { PublicAddress } from './http/public-address.js';
import type { RouteDef } from './http/route.js';
import { Idempotency } from './idempotency/idempotency.js';
import { type AgentGenerator, templateGenerator } from './agents/generation/agent-generator.js';
import { jobRoutes } from './agents/generation/job.routes.js';
import { JobRunner, type JobRunnerSettings } from './agents/generation/job.runner.js';
import { buildOpenApiDocument } from './openapi.js';
import { RetentionPurge } from './retention/retention.purge.js';
import { Parts } from './shared/parts.js';
import { openStore, type Store } from './store/db.js';
import { StoreHealth, storeOutage } from './store/store-health.js';
import { WriteBatcher } from './store/write-batcher.js';
import { systemRoutes } from './system.routes.js';
import { AuditTrail } from './audit/audit-trail.js';
import { auditRoutes } from './audit/audit.routes.js';
import { principalKey } from './http/principal.js';
import { permit } from './teams/route-roles.js';
import { TeamService } from './teams/team.service.js';
import { userRoutes } from './teams/user.routes.js';
import { singleSignOnRoutes } from './console/single-sign-on-settings.routes.js';
import { sdkRoute } from './sdk.route.js';
import { widgetLocaleRoute, widgetModuleRoute, widgetRoute } from './widget.route.js';

export interface AppOptions {
  config: Config;
  logger: Logger;
  generator?: AgentGenerator;
  jobs?: JobRunnerSettings;
  /** Conversation analysis's poll, lease and quiet time (README, Tests and analysis). */
  analysis?: AnalysisRunnerSettings;
  /** Session timings, shortened by tests. */
  sessions?: {
    helloTimeoutMs?: number;
    pingIntervalMs?: number;
    drainTimeoutMs?: number;
    sweepIntervalMs?: number;
    hookRetryDelaysMs?: readonly number[];
    /** How long a stop waits for hook calls in flight before cutting them off. */
    shutdownGraceMs?: number;
    /** How long the recogniser has for one utterance (15 s). */
    recognitionTimeoutMs?: number;
    /** How long the synthesiser has for one sentence (10 s). */
    synthesisTimeoutMs?: number;
  };
  /** Slow-client limits (10 s each, 30 s for a stalled export: README, Security and The management API), shortened by tests. */
  timeouts?: { headersMs?: number; bodyMs?: number; streamStallMs?: number };
  /** PostgreSQL schema to use (tests isolate each file in its own). */
  pgSchema?: string;
  /** Where the built console is (default `console/dist`). */
  consoleDir?: string;
  /** How often an open activity stream asks whether its key or session still holds, shortened by tests. */
  activityRecheckMs?: number;
  /** The activity stream's budgets and pace (ACTIVITY_DEFAULTS), made small by tests. */
  activity?: Partial<typeof ACTIVITY_DEFAULTS>;
  /** How much speech the service takes (SPEECH_LIMITS), made small by tests. */
  speech?: Partial<SpeechLimits>;
  /** How often URL documents are checked for a refresh that is due (5 minutes), shortened by tests. */
  knowledgeRefreshMs?: number;
}

export interface App {
  readonly store: Store;
  readonly server: Server;
  readonly consoleAccounts: ConsoleAccounts;
  readonly deployments: DeploymentService;
  readonly routes: readonly RouteDef[];
  /** The declared routes as served, `method path`. */
  readonly served: readonly string[];
  /** Starts listening, then every part; resolves with the base URL actually bound. */
  listen(): Promise<string>;
  /** The first step of a SIGTERM: `/readyz` answers 503 from now on while everything else keeps serving. */
  drain(): void;
  /** Graceful: stop accepting, finish in-flight requests, then stop every part in reverse order and close the store. */
  close(): Promise<void>;
}

/** The composition root: builds every part from config, in the order they start; no rules live here. */
export async function createApp(options: AppOptions): Promise<App> {
  const { config, logger } = options;
  const timings = { ...SESSION_DEFAULTS, ...TURN_DEFAULTS, sweepIntervalMs: 1_000, ...options.sessions };
  const parts = new Parts();
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    ...(options.pgSchema ? { pgSchema: options.pgSchema } : {}),
  });
  const { db, dialect } = store;
  parts.add({ stop: () => store.close() });
  const health = new StoreHealth({ ping: store.ping, logger });
  parts.add({ stop: () => health.close() });
  const address = new PublicAddress(config.publicBaseUrl, config.host);
  const egress = { allowedHosts: config.hookAllowedHosts };
  const bus: ConversationBus = store.openChannel
    ? await PgBus.open({ db, openChannel: store.openChannel, logger, health })
    : new LocalBus();
  parts.add({ stop: () => bus.close() });
  const passwords = parts.add(new PasswordHasher());
  const consoleAccounts = new ConsoleAccounts({
    db,
    hasher: passwords,
    dialect,
    issuer: config.sso?.issuer.replace(/\/+$/, ''),
  });
  const usage = parts.add(new UsageRecorder({ db, health }));
  const keys = new ApiKeyAuthenticator(db);
  const credentials = [bearerKey(keys), consoleSession(consoleAccounts, address)];
  const jobs = parts.add(
    new JobRunner({ db, generator: options.generator ?? templateGenerator, logger, health }, options.jobs),
  );
  const idempotency = parts.add(new Idempotency({ db, health }));
  parts.add(
    new RetentionPurge(
      { db, health, dialect },
      {
        conversationDays: config.conversationRetentionDays,
        deliveryDays: config.deliveryRetentionDays,
        auditDays: config.auditRetentionDays,
      },
    ),
  );
  const searchIndex = parts.add(new SearchIndex({ db, dialect, health }));
  const deployments = new DeploymentDirectory(db);
  const outbox = parts.add(
    new TranscriptOutbox({ db, deployments, egress, logger, health, dialect }, { intervalMs: timings.sweepIntervalMs }),
  );
  const activity = parts.add(
    new ActivityHub(
      { db, bus, health },
      { ...ACTIVITY_DEFAULTS, ...options.activity, otherNodes: dialect === 'postgres' },
    ),
  );
  // Read when scraped: the sockets are counted by the gateway built further down.
  const metrics: ServiceMetrics = new ServiceMetrics({
    openSockets: () => sessions.openSockets,
    openConversations: () => countOpenConversations(db),
    outbox: () => outboxBacklog(db),
    storeUp: () => !health.down,
  });
  const rollup = new AnalyticsRollup();
  // SQLite has one connection; a PostgreSQL pool of 10 keeps a few batches in flight.
  const writes = new WriteBatcher(db, { concurrency: dialect === 'postgres' ? 4 : 1, direct: store.direct }, (trx) =>
    rollup.write(trx),
  );
  const known = new KnownValues();
  const events = new EventRecorder({
    writes,
    bus,
    transcripts: outbox,
    listeners: [activity, metrics],
    rollup,
    dialect,
    known,
  });
  const conversations = new ConversationService({ db, deployments, events });
  const node = parts.add(new NodeHeartbeat({ db, health }));
  const knowledge = openKnowledge(parts, { db, writes, dialect, egress, health }, config, options.knowledgeRefreshMs);
  const modelEndpoints = new ModelEndpointService({
    db,
    writes,
    keys: secretsKeys(config.dataDir, config.secretsKey, config.previousSecretsKeys),
  });
  const evaluationModels = new EvaluationModels({ endpoints: modelEndpoints, operator: config.model });
  const responders: Responders = {
    hook: new HookResponder({ db, egress, logger, health, address }, timings.hookRetryDelaysMs),
    model: new ModelResponder({
      db,
      egress,
      logger,
      endpoints: modelEndpoints,
      operator: config.model,
      calls: new PerKeyCap(config.modelConcurrency),
      judges: evaluationModels,
    }),
    knowledge: new KnowledgeResponder(),
  };
  const pages = new PageService({ db, events });
  const specs = new ConversationSpecs(db);
  const turns = new TurnService(
    {
      db,
      nodeId: node.id,
      deployments,
      conversations,
      events,
      logger,
      health,
      responders,
      knowledge: knowledge.retrieval,
      pages,
      specs,
      personal: new PersonalValueFinder({ models: evaluationModels, known, egress, logger }),
    },
    { shutdownGraceMs: timings.shutdownGraceMs },
  );
  parts.add({ stop: () => turns.drain() });
  turnUpkeep(parts, { turns, db, dialect, deployments, events, health }, timings);
  const diagnostics = parts.add(new InstallDiagnostics({ db, health }));
  const { speech, synthesis } = openSpeech(parts, { egress, logger }, config, { ...timings, limits: options.speech });
  const deploymentService = new DeploymentService({ db, writes, listeners: { conversations, transcripts: outbox } });
  const history = storedFrames(db);
  const handling = new ConversationHandling({ db, deployments, events });
  const sessions = new SessionGateway(
    {
      services: {
        conversations,
        handling,
        turns,
        pages,
        deployments,
        history,
        bus,
        health,
        diagnostics,
        speech,
        synthesis,
      },
      address,
    },
    {
      helloTimeoutMs: timings.helloTimeoutMs,
      pingIntervalMs: timings.pingIntervalMs,
      drainTimeoutMs: timings.drainTimeoutMs,
      maxSocketsPerConversation: timings.maxSocketsPerConversation,
      newConversationsPerSub: config.newConversationsPerSub,
      preHelloSocketsPerAddress: config.preHelloSocketsPerAddress,
      trustProxy: config.trustProxy,
    },
  );
  const trail = new AuditTrail({ trustProxy: config.trustProxy });
  const team = new TeamService({
    db,
    dialect,
    accounts: consoleAccounts,
    baseUrl: () => address.url,
    onRemoved: (customerId, userId) =>
      activity.endStreamsOf(customerId, principalKey({ customerId, keyId: null, userId, role: 'agent' })),
  });
  const conversationHistory = new ConversationHistory({ db, dialect, searchIndex });
  parts.add(
    new AnalysisRunner(
      { db, deployments, specs, models: evaluationModels, events, egress, logger, health },
      { leaseMs: config.analysisLeaseMs, ...options.analysis },
    ),
  );
  const agentTests = new AgentTestService({
    db,
    writes,
    deployments,
    runner: new TestRunner({ db, conversations, turns, bus, egress }),
    models: evaluationModels,
  });
  const replies = new ReplyService({ db, deployments, events, bus });
  let openApiDocument: unknown;
  let draining = false;
  const routes: RouteDef[] = [
    ...systemRoutes({
      store,
      draining: () => draining,
      openApi: () => (openApiDocument ??= buildOpenApiDocument(routes, address.url || undefined)),
    }),
    ...agentRoutes({
      db,
      writes,
      trail,
      onJobQueued: () => jobs.poke(),
      onChanged: (agentId) => deployments.agentChanged(agentId),
      beforePublish: (customerId, agentId, draft) => agentTests.gate(customerId, agentId, draft),
    }),
    ...agentTestRoutes(agentTests, trail),
    briefRoute(new ConversationBriefs({ db, deployments, specs, models: evaluationModels, egress })),
    ...jobRoutes(db),
    voiceSampleRoute({ db, synthesis }),
    ...modelEndpointRoutes(modelEndpoints, trail),
    modelEndpointTestRoute({ endpoints: modelEndpoints, egress }),
    ...knowledgeRoutes(knowledge, trail),
    ...deploymentRoutes(
      deploymentService,
      { recognisesSpeech: speech.available, synthesisesSpeech: synthesis.engine !== undefined },
      trail,
    ),
    previewTokenRoute(deployments),
    ...conversationRoutes(conversationHistory, conversations, trail),
    ...deliveryRoutes(new DeliveryService({ db, deployments, egress, address }), trail),
    ...replyRoutes(replies, {
      signatureFailuresPerMinute: config.replySignatureFailuresPerMinute,
      trustProxy: config.trustProxy,
    }),
    ...activityRoutes(activity, {
      holds: credentialCheck(credentials),
      recheckMs: options.activityRecheckMs ?? ACTIVITY_RECHECK_MS,
    }),
    ...analyticsRoutes(new AnalyticsService({ db })),
    diagnosticsRoute(diagnostics, deploymentService),
    ...peopleRoutes({
      handling,
      conversations,
      history: conversationHistory,
      replies,
      trail,
    }),
    ...apiKeyRoutes({ db, usage, keys, trail }),
    ...userRoutes(team, trail),
    ...singleSignOnRoutes({ db, writes, trail, provider: config.sso?.name }),
    ...auditRoutes(db),
    ...consoleRoutes({ accounts: consoleAccounts, trail, address, trustProxy: config.trustProxy }),
    ...ssoRoutes({
      sso: config.sso && new SingleSignOn(config.sso, () => `${address.url}/console/sso/callback`),
      accounts: consoleAccounts,
      trail,
      address,
      logger,
    }),
    widgetRoute(),
    widgetModuleRoute(),
    widgetLocaleRoute(),
    sdkRoute(),
    metricsRoute(metrics, config.metricsToken, config.trustProxy),
  ];
  const timeouts = { headersMs: 10_000, bodyMs: 10_000, streamStallMs: 30_000, ...options.timeouts };
  const { server, served } = httpServer(
    {
      routes,
      logger,
      observe: [requestMetrics(metrics)],
      under: { '/console': [noStore], '/api/v1': [noStore, ...managementAccess(credentials, usage, config)] },
      mounts: { '/console': consoleStatic(options.consoleDir), '/favicon.ico': serviceFavicon(options.consoleDir) },
      knownErrors: [storeOutage(health)],
      repeats: idempotency,
      permit,
    },
    { config, timeouts },
  );
  server.on('upgrade', (req, socket, head) => sessions.handleUpgrade(req, socket, head));
  let bound = '';
  parts.add({
    start: async () => void (bound = await listen(server, config, address)),
    stop: () => closeServer(server, sessions, activity, timings.shutdownGraceMs),
  });
  const drain = () => {
    draining = true;
    lastResponsePerConnection(server);
    activity.endStreams();
  };

  return {
    store,
    server,
    consoleAccounts,
    deployments: deploymentService,
    routes,
    served,
    listen: () => parts.start().then(() => bound),
    drain,
    close: () => parts.stop(),
  };
}
