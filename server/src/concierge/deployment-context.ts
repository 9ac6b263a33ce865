import { notFound } from '../errors.js';
import { fromJsonColumn } from '../shared/json-column.js';
import { TtlCache } from '../shared/ttl-cache.js';
import type { Db } from '../database.js';
import { liveSecrets } from '../deployments/signing-secret.js';
import { deploymentIdsOfAgent } from '../deployments/deployment.repository.js';
import {
  type ChannelConfig,
  effectiveEngagementRules,
  effectiveRuntimeConfig,
} from '../deployments/deployment.schemas.js';
import type { CallDirection, DeploymentStatus } from '../deployments/deployment.table.js';
import { type AgentSpeech, speechOf } from '../agents/agent-speech.js';
import { promptOf, responderOf, type ResponderSpec } from '../agents/agent-responder.js';
import { z } from 'zod';
import { inLanguage, type InLanguages } from '#protocol/in-language';
import type { ProactiveRule } from '#protocol/proactive';
import { inLanguages } from '#protocol/text';
import { type AgentInfo, type AgentVoice, languageTag, type WidgetTheme } from '#protocol/frames';

/** What a session, a turn or a reply needs to know about its deployment, defaults applied. */
export interface DeploymentContext {
  id: string;
  customerId: string;
  agentId: string;
  status: DeploymentStatus;
  callDirection: CallDirection;
  secrets: string[];
  signingSecret: string;
  hookUrl: string | undefined;
  transcriptHookUrl: string | undefined;
  allowedOrigins: string[];
  widget: WidgetTheme;
  maxTurnsPerConversation: number;
  maxPendingTurns: number;
  turnsPerMinute: number;
  /** The greeting rules the widget evaluates (README, Greeting visitors first). */
  proactive: ProactiveRule[];
  hookTimeoutMs: number;
  replyTimeoutS: number;
  /** How long a turn of a conversation a person handles waits for their answer. */
  personReplyTimeoutS: number;
  /** A request for a person nobody took for this long is told to the visitor once (0: never), in these words or the widget's. */
  personWait: { noticeS: number; notice: string | undefined };
  /** Where the visitor's speech is recognised: `auto`, `browser`, `service` or `off` (README, Voice in every browser). */
  speechRecognition: 'auto' | 'browser' | 'service' | 'off';
  /** Whose voice reads replies out: `auto`, `service`, `browser` or `off` (README, The agent's own voice). */
  speechSynthesis: 'auto' | 'service' | 'browser' | 'off';
  /** The agent's voice on the service's synthesiser, and how it says words (the browser's voice is told them in `agent`). */
  agentSpeech: AgentSpeech;
  /** Who answers the agent's turns (README, An agent without a server): its hook, or a model with these settings. */
  responder: ResponderSpec;
  /** What the agent's model is told of who it is. */
  prompt: { persona: string; instructions: string };
  /** The agent's knowledge base (README, Answers from your documents): its passages go with each turn. */
  knowledgeBaseId: string | null;
  /** The agent version a conversation starting now gets: the pinned one, or the latest published. */
  agentVersion: number;
  agent: AgentInfo;
}

/** Public routes address a deployment by id alone; the signature or token then proves the caller. */
export async function loadDeploymentContext(db: Db, id: string): Promise<DeploymentContext | undefined> {
  const row = await db
    .selectFrom('deployments')
    .innerJoin('agents', 'agents.id', 'deployments.agent_id')
    // The pinned version, in the same read: a cache miss costs one query, pinned or not.
    .leftJoin('agent_versions', (join) =>
      join
        .onRef('agent_versions.agent_id', '=', 'deployments.agent_id')
        .onRef('agent_versions.version', '=', 'deployments.agent_version'),
    )
    .select([
      'deployments.id',
      'deployments.customer_id',
      'deployments.agent_id',
      'deployments.status',
      'deployments.call_direction',
      'deployments.channel_config',
      'deployments.engagement_rules',
      'deployments.runtime_config',
      'deployments.signing_secret',
      'deployments.previous_secret',
      'deployments.previous_secret_expires_at',
      'agents.name as agent_name',
      'agents.knowledge_base_id',
      'agents.version as latest_version',
      'agents.agent_spec',
      'agent_versions.version as pinned_version',
      'agent_versions.agent_spec as pinned_spec',
    ])
    .where('deployments.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const channel = fromJsonColumn<ChannelConfig>(row.channel_config);
  const rules = effectiveEngagementRules.parse(fromJsonColumn(row.engagement_rules));
  const runtime = effectiveRuntimeConfig.parse(fromJsonColumn(row.runtime_config));
  const specText = row.pinned_spec ?? row.agent_spec;
  const spec = fromJsonColumn<Record<string, unknown>>(specText) ?? {};
  return {
    id: row.id,
    customerId: row.customer_id,
    agentId: row.agent_id,
    status: row.status,
    callDirection: row.call_direction,
    secrets: liveSecrets(row),
    signingSecret: row.signing_secret,
    hookUrl: channel.hook_url,
    transcriptHookUrl: channel.transcript_hook_url,
    allowedOrigins: channel.allowed_origins ?? [],
    widget: channel.widget ?? {},
    maxTurnsPerConversation: rules.max_turns_per_conversation,
    maxPendingTurns: rules.max_pending_turns,
    turnsPerMinute: rules.turns_per_minute,
    proactive: rules.proactive,
    hookTimeoutMs: runtime.hook_timeout_ms,
    replyTimeoutS: runtime.reply_timeout_s,
    personReplyTimeoutS: runtime.person_reply_timeout_s,
    personWait: { noticeS: runtime.person_wait_notice_s, notice: runtime.person_wait_notice },
    speechRecognition: runtime.speech_recognition,
    speechSynthesis: runtime.speech_synthesis,
    agentVersion: row.pinned_version ?? row.latest_version,
    agent: agentInfo(row.agent_name, specText),
    agentSpeech: speechOf(spec),
    responder: responderOf(spec),
    knowledgeBaseId: row.knowledge_base_id,
    prompt: promptOf(spec),
  };
}

/** What the widget is told of an agent, from one of its specs. */
export function agentInfo(name: string, specText: string | null): AgentInfo {
  const spec = fromJsonColumn<Record<string, unknown>>(specText) ?? {};
  const { pronunciations } = speechOf(spec);
  const language = languageOf(spec.language);
  const greetings = greetingsOf(spec.greeting);
  return {
    name,
    greeting: greetings === null ? null : inLanguage(greetings, [language]),
    ...(greetings && typeof greetings === 'object' ? { greetings } : {}),
    language,
    voice: voiceOf(spec.voice),
    ...(pronunciations.length ? { pronunciations } : {}),
  };
}

/**
 * Deployment contexts remembered for a second, and so is the absence of one: a reply or a turn
 * costs no join per request, and a flood naming unknown deployments costs one read a second
 * each. A change made through this node is read afresh at once ({@link fresh}); one made through
 * another node is seen within `ttlMs`.
 */
export class DeploymentDirectory {
  /** null: known not to exist. */
  readonly #cache: TtlCache<DeploymentContext | null>;
  /** Deployments rechecked for a failed signature within the last `ttlMs`. */
  readonly #rechecked: TtlCache<true>;

  constructor(
    private readonly db: Db,
    settings = { ttlMs: 1_000 },
  ) {
    this.#cache = new TtlCache(settings.ttlMs);
    this.#rechecked = new TtlCache(settings.ttlMs);
  }

  async get(id: string): Promise<DeploymentContext | undefined> {
    const known = this.#cache.get(id);
    return known === undefined ? this.fresh(id) : (known ?? undefined);
  }

  /** Read from the store, refreshing what is remembered. */
  async fresh(id: string): Promise<DeploymentContext | undefined> {
    const dep = await loadDeploymentContext(this.db, id);
    this.#cache.set(id, dep ?? null);
    return dep;
  }

  /** A customer's deployment read afresh, for a management route: another customer's is 404 like an unknown one. */
  async owned(customerId: string, id: string): Promise<DeploymentContext> {
    const dep = await this.fresh(id);
    if (dep?.customerId !== customerId) throw notFound('Deployment');
    return dep;
  }

  /** After a publish, or a change of its knowledge base: this agent's deployments are read afresh (another node sees it within `ttlMs`). */
  async agentChanged(agentId: string): Promise<void> {
    await Promise.all((await deploymentIdsOfAgent(this.db, agentId)).map((id) => this.fresh(id)));
  }

  /**
   * The deployment, and whether `accepts` (a signature check) takes it: undefined when there is
   * none. What is remembered is tried first. Its refusal may predate a change made on another node
   * (a rotated secret), so the store decides, but for a refusal at most once per `ttlMs`: badly
   * signed requests must not cost a read each. At most one read per call.
   */
  async accepting(
    id: string,
    accepts: (dep: DeploymentContext) => boolean,
  ): Promise<{ dep: DeploymentContext; accepted: boolean } | undefined> {
    const remembered = this.#cache.get(id);
    if (remembered === null) return undefined;
    if (remembered) {
      if (accepts(remembered)) return { dep: remembered, accepted: true };
      if (this.#rechecked.get(id)) return { dep: remembered, accepted: false };
      this.#rechecked.set(id, true);
    }
    const dep = await this.fresh(id);
    return dep && { dep, accepted: accepts(dep) };
  }
}

/** The agent's `language` (README, Field reference): a BCP 47 tag in its canonical case, `en-US` when it has none or no valid one. */
/** The spec's `greeting`: one text, or one per language tag (a published spec's were checked; an older one's may be anything). */
function greetingsOf(greeting: unknown): InLanguages | null {
  if (typeof greeting === 'string') return greeting;
  const parsed = inLanguages(z.string()).safeParse(greeting);
  return parsed.success ? parsed.data : null;
}

/** What an agent says first in a conversation in `language` (README, The widget in your visitors' languages). */
export function greetingIn(agent: AgentInfo, language: string | undefined): string | null {
  return agent.greetings ? inLanguage(agent.greetings, [language, agent.language]) : agent.greeting;
}

function languageOf(language: unknown): string {
  const parsed = languageTag.safeParse(language);
  return parsed.success ? parsed.data : 'en-US';
}

/**
 * The spec's `voice` as the widget reads it: the fields of README's Field reference, each kept
 * only with its documented type; a bare string (an older spec) names the voice.
 */
function voiceOf(voice: unknown): AgentVoice | null {
  if (typeof voice === 'string') return { name: voice };
  if (!voice || typeof voice !== 'object') return null;
  const { name, rate, pitch } = voice as Record<string, unknown>;
  return {
    ...(typeof name === 'string' ? { name } : {}),
    ...(typeof rate === 'number' ? { rate } : {}),
    ...(typeof pitch === 'number' ? { pitch } : {}),
  };
}
