import { z } from 'zod';
import { type AllowedHost, parseAllowedHosts } from './shared/egress.js';
import { LOOPBACK_PROXIES, type ProxyTrust, parseTrustedProxies } from './http/client-address.js';

const port = z.coerce.number().int().min(0).max(65535);

const envSchema = z.object({
  PORT: port.default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HOOK_ALLOWED_HOSTS: z.string().optional(),
  MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(20_000),
  PREHELLO_SOCKETS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(20),
  NEW_CONVERSATIONS_PER_SUB: z.coerce.number().int().min(1).max(100_000).default(10),
  REPLY_SIGNATURE_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(20),
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  TRUSTED_PROXIES: z.string().max(4000).default(LOOPBACK_PROXIES),
  CONVERSATION_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(365),
  OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_CLIENT_ID: z.string().max(500).optional(),
  OIDC_CLIENT_SECRET: z.string().max(2000).optional(),
  OIDC_NAME: z.string().max(60).optional(),
  METRICS_TOKEN: z.string().min(32, 'must be at least 32 characters (openssl rand -hex 32)').optional(),
  DRAIN_S: z.coerce.number().int().min(0).max(300).default(5),
  BACKUP_KEY: z.string().min(32, 'must be at least 32 characters (openssl rand -hex 32)').optional(),
  SECRETS_KEY: z.string().min(32, 'must be at least 32 characters (openssl rand -hex 32)').optional(),
  SECRETS_KEY_PREVIOUS: z
    .string()
    .refine(
      (keys) => keys.split(',').every((key) => key.trim().length >= 32),
      'must be comma-separated keys of at least 32 characters each (the SECRETS_KEY values being rotated away)',
    )
    .optional(),
  MODEL_URL: z.url({ protocol: /^https?$/ }).optional(),
  MODEL_KEY: z.string().min(1).optional(),
  MODEL_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(20),
  ANALYSIS_LEASE_S: z.coerce.number().int().min(4).max(3_600).default(60),
  KNOWLEDGE_CHARS_PER_CUSTOMER: z.coerce.number().int().min(1).max(1_000_000_000).default(20_000_000),
  KNOWLEDGE_DOCUMENTS_PER_CUSTOMER: z.coerce.number().int().min(1).max(1_000_000).default(5_000),
  DOCUMENT_READ_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  EMBEDDINGS_URL: z.url({ protocol: /^https?$/ }).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).max(200).default('text-embedding-3-small'),
  EMBEDDINGS_KEY: z.string().min(1).optional(),
  SPEECH_TO_TEXT: z.enum(['pocketsphinx']).optional(),
  SPEECH_TO_TEXT_URL: z.url({ protocol: /^https?$/ }).optional(),
  SPEECH_TO_TEXT_MODEL: z.string().min(1).max(200).default('whisper-1'),
  SPEECH_TO_TEXT_KEY: z.string().min(1).optional(),
  SPEECH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  TEXT_TO_SPEECH: z.enum(['espeak-ng']).optional(),
  TEXT_TO_SPEECH_URL: z.url({ protocol: /^https?$/ }).optional(),
  TEXT_TO_SPEECH_MODEL: z.string().min(1).max(200).default('tts-1'),
  TEXT_TO_SPEECH_KEY: z.string().min(1).optional(),
  TEXT_TO_SPEECH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
});

/** The speech recogniser the operator chose (README, Voice in every browser), one per process. */
export type SpeechToText =
  { engine: 'openai-compatible'; url: string; model: string; key: string | undefined } | { engine: 'pocketsphinx' };

/** The speech synthesiser the operator chose (README, The agent's own voice), one per process. */
export type TextToSpeech =
  { engine: 'openai-compatible'; url: string; model: string; key: string | undefined } | { engine: 'espeak-ng' };

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Empty when PORT=0: the base is known only once the server listens. */
  readonly publicBaseUrl: string | undefined;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly rateLimitPerMinute: number;
  readonly logLevel: string;
  /**
   * Hosts (names or IP literals, each on one port or on all) that hooks may reach although they
   * resolve to a non-public address (HOOK_ALLOWED_HOSTS); every other such target is refused.
   */
  readonly hookAllowedHosts: readonly AllowedHost[];
  /** Sockets this node holds at most; past it new ones are refused at once. */
  readonly maxConnections: number;
  /** Sockets one client address may hold open before `hello`. */
  readonly preHelloSocketsPerAddress: number;
  /** New conversations one `sub` may start on a deployment per 10 minutes. */
  readonly newConversationsPerSub: number;
  /** Badly signed replies one client address may send per minute; past it each badly signed one is 429 until the minute ends. */
  readonly replySignatureFailuresPerMinute: number;
  /**
   * Proxy hops in front of the service whose X-Forwarded-For is believed (0: the socket's address
   * is the client's), each only from an address of TRUSTED_PROXIES.
   */
  readonly trustProxy: ProxyTrust;
  /** Days an ended conversation is kept after its last change (0: forever). */
  readonly conversationRetentionDays: number;
  /** Days a delivered transcript event is kept (0: forever). */
  readonly deliveryRetentionDays: number;
  /** Audit records are kept this many days (0: forever). */
  readonly auditRetentionDays: number;
  /** Single sign-on to the console through an OpenID Provider (README, Your team); none without OIDC_ISSUER. */
  readonly sso: { issuer: string; clientId: string; clientSecret: string; name: string } | undefined;
  /** The Bearer token `GET /metrics` asks for; without one the route does not exist. */
  readonly metricsToken: string | undefined;
  /** The key SQLite backups are tagged with (else `backup.key` in DATA_DIR, made by the first backup). */
  readonly backupKey: string | undefined;
  /** The key customers' secrets are sealed with (else `secrets.key` in DATA_DIR, made at first need). */
  readonly secretsKey: string | undefined;
  /** Keys that sealed secrets before SECRETS_KEY (a rotation): they still open them, until `reseal-secrets`. */
  readonly previousSecretsKeys: readonly string[];
  /** The operator's model endpoint for agents that name none (README, An agent without a server). */
  readonly model: { url: string; key: string | undefined } | undefined;
  /** Model calls one customer may have in flight on this node; past it a turn waits for a place. */
  readonly modelConcurrency: number;
  /** How long a node holds a conversation analysis it claimed (README, Tests and analysis): after it, another node takes it over. */
  readonly analysisLeaseMs: number;
  /** What one customer may keep in all their knowledge bases: characters of text, and documents. */
  readonly knowledgeQuota: { chars: number; documents: number };
  /** How long a document may take to read before it is refused (its reading thread ended). */
  readonly documentReadTimeoutMs: number;
  /** An OpenAI-compatible embeddings endpoint: knowledge bases search by meaning as well as by words. */
  readonly embeddings: { url: string; model: string; key: string | undefined } | undefined;
  /** Seconds a SIGTERM keeps the node serving with `/readyz` at 503, so a load balancer moves traffic away before the sockets close. */
  readonly drainSeconds: number;
  /** Where the visitors' audio is recognised; none: the service recognises nothing. */
  readonly speechToText: SpeechToText | undefined;
  /** Recognitions this process runs at once; past it `speech_busy`. */
  readonly speechConcurrency: number;
  /** The synthesiser (TEXT_TO_SPEECH or TEXT_TO_SPEECH_URL); none: replies are spoken by the browser. */
  readonly textToSpeech: TextToSpeech | undefined;
  /** Sentences synthesised at once by this process (TEXT_TO_SPEECH_CONCURRENCY). */
  readonly synthesisConcurrency: number;
}

export class ConfigError extends Error {}

/** Parses the environment once; every problem is reported at start, not at first use. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means unset, as in most tools (`DATABASE_URL= npm start`).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
  if (e.SPEECH_TO_TEXT && e.SPEECH_TO_TEXT_URL)
    throw new ConfigError(
      'Invalid configuration:\n  SPEECH_TO_TEXT_URL and SPEECH_TO_TEXT=pocketsphinx name two recognisers: set one',
    );
  if (e.TEXT_TO_SPEECH && e.TEXT_TO_SPEECH_URL)
    throw new ConfigError(
      'Invalid configuration:\n  TEXT_TO_SPEECH_URL and TEXT_TO_SPEECH=espeak-ng name two synthesisers: set one',
    );
  const textToSpeech: TextToSpeech | undefined = e.TEXT_TO_SPEECH_URL
    ? {
        engine: 'openai-compatible',
        url: e.TEXT_TO_SPEECH_URL,
        model: e.TEXT_TO_SPEECH_MODEL,
        key: e.TEXT_TO_SPEECH_KEY,
      }
    : e.TEXT_TO_SPEECH
      ? { engine: e.TEXT_TO_SPEECH }
      : undefined;
  const speechToText: SpeechToText | undefined = e.SPEECH_TO_TEXT_URL
    ? {
        engine: 'openai-compatible',
        url: e.SPEECH_TO_TEXT_URL,
        model: e.SPEECH_TO_TEXT_MODEL,
        key: e.SPEECH_TO_TEXT_KEY,
      }
    : e.SPEECH_TO_TEXT
      ? { engine: e.SPEECH_TO_TEXT }
      : undefined;
  const oidc = [e.OIDC_ISSUER, e.OIDC_CLIENT_ID, e.OIDC_CLIENT_SECRET];
  if (oidc.some(Boolean) && !oidc.every(Boolean))
    throw new ConfigError(
      'Invalid configuration:\n  OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together: set all three for single sign-on, or none',
    );
  let hookAllowedHosts: AllowedHost[];
  let trustProxy: ProxyTrust;
  try {
    hookAllowedHosts = parseAllowedHosts(e.HOOK_ALLOWED_HOSTS ?? '');
    trustProxy = { hops: e.TRUST_PROXY, proxies: parseTrustedProxies(e.TRUSTED_PROXIES) };
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${(err as Error).message}`);
  }
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    logLevel: e.LOG_LEVEL,
    maxConnections: e.MAX_CONNECTIONS,
    preHelloSocketsPerAddress: e.PREHELLO_SOCKETS_PER_ADDRESS,
    newConversationsPerSub: e.NEW_CONVERSATIONS_PER_SUB,
    replySignatureFailuresPerMinute: e.REPLY_SIGNATURE_FAILURES_PER_MINUTE,
    trustProxy,
    conversationRetentionDays: e.CONVERSATION_RETENTION_DAYS,
    deliveryRetentionDays: e.DELIVERY_RETENTION_DAYS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    sso: e.OIDC_ISSUER
      ? {
          issuer: e.OIDC_ISSUER,
          clientId: e.OIDC_CLIENT_ID!,
          clientSecret: e.OIDC_CLIENT_SECRET!,
          name: e.OIDC_NAME ?? new URL(e.OIDC_ISSUER).host,
        }
      : undefined,
    metricsToken: e.METRICS_TOKEN,
    drainSeconds: e.DRAIN_S,
    backupKey: e.BACKUP_KEY,
    secretsKey: e.SECRETS_KEY,
    previousSecretsKeys: e.SECRETS_KEY_PREVIOUS?.split(',').map((key) => key.trim()) ?? [],
    model: e.MODEL_URL ? { url: e.MODEL_URL.replace(/\/+$/, ''), key: e.MODEL_KEY } : undefined,
    modelConcurrency: e.MODEL_CONCURRENCY,
    analysisLeaseMs: e.ANALYSIS_LEASE_S * 1000,
    knowledgeQuota: { chars: e.KNOWLEDGE_CHARS_PER_CUSTOMER, documents: e.KNOWLEDGE_DOCUMENTS_PER_CUSTOMER },
    documentReadTimeoutMs: e.DOCUMENT_READ_TIMEOUT_MS,
    embeddings: e.EMBEDDINGS_URL
      ? { url: e.EMBEDDINGS_URL.replace(/\/+$/, ''), model: e.EMBEDDINGS_MODEL, key: e.EMBEDDINGS_KEY }
      : undefined,
    speechToText,
    speechConcurrency: e.SPEECH_CONCURRENCY,
    textToSpeech,
    synthesisConcurrency: e.TEXT_TO_SPEECH_CONCURRENCY,
    hookAllowedHosts,
  });
}
