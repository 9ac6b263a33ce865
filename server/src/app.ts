import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger } from 'pino';
import { agentRoutes } from './agents/agent.routes.js';
import { ApiKeyAuthenticator } from './api-keys/api-key.authenticator.js';
import { apiKeyRoutes } from './api-keys/api-key.routes.js';
import { UsageRecorder } from './api-keys/usage.recorder.js';
import type { Config } from './config.js';
import { ConsoleAccounts } from './console/console-accounts.js';
import { consoleRoutes } from './console/console.routes.js';
import { PasswordHasher } from './console/password-hasher.js';
import { consoleStatic, serviceFavicon } from './console/console-static.js';
import { ConversationHistory } from './concierge/conversations/conversation-history.js';
import { conversationRoutes } from './concierge/conversations/conversation.routes.js';
import { ConversationService } from './concierge/conversations/conversation.service.js';
import { SearchIndex } from './concierge/conversations/search-index.js';
import { deliveryRoutes } from './concierge/deliveries/delivery.routes.js';
import { DeliveryService } from './concierge/deliveries/delivery.service.js';
import { DeploymentDirectory } from './concierge/deployment-context.js';
import { type ConversationBus, LocalBus } from './concierge/events/conversation-bus.js';
import { EventRecorder } from './concierge/events/event.recorder.js';
import { framesAfter } from './concierge/events/event.repository.js';
import { PgBus } from './concierge/events/pg-bus.js';
import { TranscriptOutbox } from './concierge/events/transcript.outbox.js';
import { SessionGateway } from './concierge/sessions/session.gateway.js';
import { replyRoutes } from './concierge/turns/reply.routes.js';
import { ReplyService } from './concierge/turns/reply.service.js';
import { TurnService } from './concierge/turns/turn.service.js';
import { TurnSweep } from './concierge/turns/turn.sweep.js';
import { deploymentRoutes } from './deployments/deployment.routes.js';
import { previewTokenRoute } from './deployments/preview-token.routes.js';
import { perKeyRateLimit, requirePrincipal, resolvePrincipal } from './http/auth.js';
import { noStore } from './http/no-store.js';
import { accessLog } from './http/access-log.js';
import { errorHandler, notFoundRoute } from './http/error-handler.js';
import { requestId } from './http/request-id.js';
import type { RouteDef } from './http/route.js';
import { dispatchRoutes } from './http/dispatch.js';
import { type AgentGenerator, templateGenerator } from './jobs/agent-generator.js';
import { Idempotency } from './idempotency/idempotency.js';
import { jobRoutes } from './jobs/job.routes.js';
import { JobRunner, type JobRunnerOptions } from './jobs/job.runner.js';
import { buildOpenApiDocument } from './openapi.js';
import { RetentionPurge } from './retention/retention.purge.js';
import { BackgroundLoop } from './shared/background-loop.js';
import { PerKeyCap } from './shared/per-key-cap.js';
import { WriteBatcher } from './store/write-batcher.js';
import { widgetRoute } from './widget.route.js';
import { openStore, type Store } from './store/db.js';
import { StoreHealth } from './store/store-health.js';
import { systemRoutes } from './system.routes.js';

export interface AppOptions {
  config: Config;
  logger: Logger;
  generator?: AgentGenerator;
  jobs?: JobRunnerOptions;
  /** Session timings, shortened by tests. */
  sessions?: {
    helloTimeoutMs?: number;
    pingIntervalMs?: number;
    drainTimeoutMs?: number;
    sweepIntervalMs?: number;
    hookRetryDelaysMs?: readonly number[];
    /** How long a stop waits for hook calls in flight before cutting them off. */
    shutdownGraceMs?: number;
  };
  /** Slow-client limits (10 s each, 30 s for a stalled export: README, Security and The management API), shortened by tests. */
  timeouts?: { headersMs?: number; bodyMs?: number; streamStallMs?: number };
  /** PostgreSQL schema to use (tests isolate each file in its own). */
  pgSchema?: string;
  /** Where the built console is (default `console/dist`). */
  consoleDir?: string;
}

export interface App {
  readonly store: Store;
  readonly server: Server;
  readonly consoleAccounts: ConsoleAccounts;
  readonly routes: readonly RouteDef[];
  /** The declared routes as served, `method path`. */
  readonly served: readonly string[];
  /** Starts listening; resolves with the base URL actually bound. */
  listen(): Promise<string>;
  /** Graceful: stop accepting, finish in-flight requests, stop workers, close the store. */
  close(): Promise<void>;
}

/** Conversation exports one customer may run at once on a node (2, README: The management API). */
const EXPORTS_PER_CUSTOMER = 2;

/** The composition root: builds every part from config and wires them; no rules live here. */
export async function createApp(options: AppOptions): Promise<App> {
  const { config, logger } = options;
  const timeouts = { headersMs: 10_000, bodyMs: 10_000, streamStallMs: 30_000, ...options.timeouts };
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(options.pgSchema ? { pgSchema: options.pgSchema } : {}) });
  const { db } = store;
  const health = new StoreHealth(store.ping, logger);
  const usage = new UsageRecorder(db, health);
  const keys = new ApiKeyAuthenticator(db);
  const jobs = new JobRunner(db, options.generator ?? templateGenerator, logger, health, options.jobs);
  const idempotency = new Idempotency(db, health);
  const passwords = new PasswordHasher();
  const consoleAccounts = new ConsoleAccounts(db, passwords, store.dialect === 'postgres');

  let baseUrl = config.publicBaseUrl ?? '';
  let openApiDocument: unknown;
  const bus: ConversationBus = store.openChannel ? await PgBus.open(db, store.openChannel, logger, health) : new LocalBus();
  const egress = { allowedHosts: config.hookAllowedHosts };
  const deployments = new DeploymentDirectory(db);
  const skipLocked = store.dialect === 'postgres';
  const outbox = new TranscriptOutbox(db, deployments, egress, logger, health, skipLocked, options.sessions?.sweepIntervalMs);
  // SQLite has one connection; a PostgreSQL pool of 10 keeps a few batches in flight.
  const events = new EventRecorder(new WriteBatcher(db, skipLocked ? 4 : 1), bus, () => outbox.poke());
  const conversations = new ConversationService(db, deployments, events);
  const turns = new TurnService({
    deployments,
    conversations,
    events,
    egress,
    logger,
    health,
    publicBaseUrl: () => baseUrl,
    ...(options.sessions?.hookRetryDelaysMs ? { hookRetryDelaysMs: options.sessions.hookRetryDelaysMs } : {}),
  });
  const replies = new ReplyService(db, deployments, events, bus);
  const deliveries = new DeliveryService({ db, deployments, egress, publicBaseUrl: () => baseUrl });
  const turnSweep = new TurnSweep(db, deployments, events, skipLocked);
  const sessions = new SessionGateway({
    conversations,
    turns,
    deployments,
    history: { framesAfter: (conversationId, seq, limit) => framesAfter(db, conversationId, seq, limit) },
    bus,
    health,
    newConversationsPerSub: config.newConversationsPerSub,
    preHelloSocketsPerAddress: config.preHelloSocketsPerAddress,
    trustProxyHops: config.trustProxyHops,
    publicBaseUrl: config.publicBaseUrl,
    ...options.sessions,
  });
  const searchIndex = new SearchIndex(db, store.dialect, health);
  const retention = new RetentionPurge(db, health, { conversationDays: config.conversationRetentionDays, deliveryDays: config.deliveryRetentionDays, skipLocked });
  const sweeper = new BackgroundLoop('turn sweep', () => turnSweep.sweep(), health, options.sessions?.sweepIntervalMs ?? 1_000);
  const routes: RouteDef[] = [
    ...systemRoutes({ store, openApi: () => (openApiDocument ??= buildOpenApiDocument(routes, baseUrl || undefined)) }),
    ...agentRoutes({ db, onJobQueued: () => jobs.poke(), onPublished: (agentId) => deployments.agentChanged(agentId) }),
    ...jobRoutes(db),
    ...deploymentRoutes({ db, changed: (id) => conversations.deploymentChanged(id), transcriptsResumed: (id) => outbox.resume(id) }),
    previewTokenRoute(deployments),
    ...conversationRoutes(new ConversationHistory(db, store.dialect, searchIndex), conversations),
    ...deliveryRoutes(deliveries),
    ...replyRoutes(replies, { signatureFailuresPerMinute: config.replySignatureFailuresPerMinute, trustProxyHops: config.trustProxyHops }),
    ...apiKeyRoutes({ db, usage, keys }),
    ...consoleRoutes({ accounts: consoleAccounts, secure: config.publicBaseUrl?.startsWith('https:') ?? false, trustProxyHops: config.trustProxyHops }),
    widgetRoute(),
  ];

  const before = [requestId, accessLog(logger)];
  const under = {
    '/console': [noStore],
    '/api/v1': [noStore, resolvePrincipal(keys, usage, { accounts: consoleAccounts, publicBaseUrl: config.publicBaseUrl }), perKeyRateLimit(config.rateLimitPerMinute, config.trustProxyHops), requirePrincipal],
  };
  const onError = errorHandler(logger, health);
  const streams = { stallMs: timeouts.streamStallMs, perCustomer: new PerKeyCap(EXPORTS_PER_CUSTOMER) };
  const dispatch = dispatchRoutes(routes, { before, under, onError, bodyTimeoutMs: timeouts.bodyMs, idempotency, streams });

  // Express serves what is not a declared route: the console's files, and every unknown path
  // (after the same middleware, so an unknown /api/v1 path still wants a key first).
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(...before);
  for (const [prefix, chain] of Object.entries(under)) app.use(prefix, ...chain);
  app.use('/console', consoleStatic(options.consoleDir));
  app.use('/favicon.ico', serviceFavicon(options.consoleDir));
  app.use(notFoundRoute);
  app.use(onError);

  // Slow-loris guards: headers must arrive within 10 s, a body within 10 s of them (see
  // readRawBody), and the whole request within their sum. Node checks these every second
  // (its default, 30 s, held a silent socket that long).
  const server = createServer(
    { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.headersMs + timeouts.bodyMs, connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs) },
    (req, res) => dispatch(req, res) || app(req, res),
  );
  // Past this many sockets new ones are closed at once, so an exhausted node fails fast, not slowly.
  server.maxConnections = config.maxConnections;
  server.on('upgrade', (req, socket, head) => sessions.handleUpgrade(req, socket, head));

  return {
    store,
    server,
    consoleAccounts,
    routes,
    served: dispatch.served,
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const { port } = server.address() as AddressInfo;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      baseUrl ||= `http://localhost:${port}`;
      usage.start();
      jobs.start();
      sweeper.start();
      outbox.start();
      idempotency.start();
      retention.start();
      searchIndex.start();
      return `http://${host}:${port}`;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      sessions.close();
      server.closeIdleConnections();
      await closed;
      await sweeper.stop();
      await turns.drain(options.sessions?.shutdownGraceMs);
      await outbox.stop();
      await idempotency.stop();
      await retention.stop();
      await searchIndex.stop();
      await bus.close();
      await jobs.stop();
      await usage.stop();
      await passwords.stop();
      health.close();
      await store.close();
    },
  };
}
