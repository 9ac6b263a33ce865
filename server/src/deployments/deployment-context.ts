import { notFound } from '../errors.js';
import { fromJsonColumn } from '../shared/json-column.js';
import { TtlCache } from '../shared/ttl-cache.js';
import type { Db } from '../database.js';
import { liveSecrets } from './signing-secret.js';
import { deploymentIdsOfAgent } from './deployment.repository.js';
import { type ChannelConfig, effectiveEngagementRules, effectiveRuntimeConfig } from './deployment.schemas.js';
import type { CallDirection, DeploymentStatus } from './deployment.table.js';
import { type AgentSpeech, speechOf } from '../agents/agent-speech.js';
import { promptOf, responderOf, type ResponderSpec } from '../agents/agent-responder.js';
import { type GuardrailsSpec, guardrailsOf } from '../agents/agent-guardrails.js';
import { type AnalysisSpec, analysisOf, type EvaluationSpec, evaluationOf } from '../agents/agent-quality.js';
import { z } from 'zod';
import { inLanguage, type InLanguages } from '#protocol/in-language';
import type { ProactiveRule } from '#protocol/proactive';
import { inLanguages } from '#protocol/text';
import { type AgentInfo, type AgentVoice, languageTag, type VoiceMode, type WidgetTheme } from '#protocol/frames';
import type { RecognitionSetting, SynthesisSetting } from '#protocol/speech-settings';
import { type KeepMode, patternKinds, type RedactionKind } from '#protocol/privacy';

/**
 * What a session, a turn or a reply needs to know about its deployment, defaults applied, in
 * groups: a new feature adds a group (or a field to one), not fields beside every other.
 */
export interface DeploymentContext {
  id: string;
  customerId: string;
  agentId: string;
  status: DeploymentStatus;
  callDirection: CallDirection;
  /** Its signing secrets: each still valid verifies a token or a reply; the current one signs. */
  signing: { secrets: string[]; current: string };
  /** Where the service calls the customer's server (README, Concierge sessions), and how long a call may take. */
  hook: { url: string | undefined; transcriptUrl: string | undefined; timeoutMs: number };
  /** The widget: its look, the origins whose pages may open it, the greeting rules it evaluates (README, Greeting visitors first). */
  widget: { theme: WidgetTheme; allowedOrigins: string[]; proactive: ProactiveRule[] };
  /** How much a conversation may ask, and how long a reply may take. */
  limits: { turnsPerConversation: number; pendingTurns: number; turnsPerMinute: number; replyTimeoutS: number };
  /**
   * A person in the conversation (README, A person in the conversation): how long their answer to a
   * turn may take, and a request nobody took for `waitNoticeS` told to the visitor once (0: never),
   * in these words or the widget's.
   */
  person: { replyTimeoutS: number; waitNoticeS: number; waitNotice: string | undefined };
  /**
   * Voice (README, Voice in every browser; The agent's own voice; Hands-free voice): where the
   * visitor's speech is recognised, whose voice reads replies out, how the visitor talks (absent:
   * hands-free where the service recognises), and the agent's voice on the service's synthesiser and
   * its turn-taking (the browser's voice is told it in `agent`).
   */
  voice: {
    recognition: RecognitionSetting;
    synthesis: SynthesisSetting;
    mode: VoiceMode | undefined;
    speech: AgentSpeech;
  };
  /** What is kept of what is said (README, Privacy: what is kept), and for how long once the conversation ends. */
  privacy: { keep: KeepMode; redact: readonly RedactionKind[]; retentionDays: number | undefined };
  /** What the widget is told of the agent. */
  agent: AgentInfo;
  /**
   * The agent's spec as the service answers by it: the version a conversation starting now gets
   * (the pinned one, or the latest published), who answers its turns (README, An agent without a
   * server), what its model is told of who it is, and its knowledge base (README, Answers from your
   * documents).
   */
  spec: AgentSpecView;
  /**
   * Conversations split between published versions by weight (README, Tests and analysis); empty:
   * every new conversation gets `spec.version`.
   */
  versions: VersionShare[];
  /** Set on a test run's conversation (README, Tests and analysis): its hook is told `test: true`, and these tools answer as written. */
  test?: { runId: string; mocks: Record<string, unknown> };
}

/** One version's share of a deployment's new conversations. */
export interface VersionShare {
  version: number;
  weight: number;
}

/** An agent spec as a conversation is answered by it. */
export interface AgentSpecView {
  version: number;
  responder: ResponderSpec;
  prompt: { persona: string; instructions: string };
  knowledgeBaseId: string | null;
  /** What is asked of each ended conversation; undefined: nothing. */
  analysis: AnalysisSpec | undefined;
  evaluation: EvaluationSpec;
  /** What a model agent's replies may not say (README, Variables and guardrails). */
  guardrails: GuardrailsSpec;
}

/** The view of one spec of an agent (its draft, a version), for a conversation answered by it. */
export function specView(
  spec: Record<string, unknown>,
  version: number,
  knowledgeBaseId: string | null,
): AgentSpecView {
  return {
    version,
    responder: responderOf(spec),
    prompt: promptOf(spec),
    knowledgeBaseId,
    analysis: analysisOf(spec),
    evaluation: evaluationOf(spec),
    guardrails: guardrailsOf(spec),
  };
}

/** The deployment as a conversation answered by another spec of its agent sees it (its version, or a test run's). */
export function withSpec(
  dep: DeploymentContext,
  specText: string,
  version: number,
  test?: DeploymentContext['test'],
): DeploymentContext {
  const spec = fromJsonColumn<Record<string, unknown>>(specText) ?? {};
  return {
    ...dep,
    voice: { ...dep.voice, speech: speechOf(spec) },
    agent: agentInfo(dep.agent.name, specText),
    spec: specView(spec, version, dep.spec.knowledgeBaseId),
    ...(test ? { test } : {}),
  };
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
      'deployments.agent_versions',
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
    signing: { secrets: liveSecrets(row), current: row.signing_secret },
    hook: { url: channel.hook_url, transcriptUrl: channel.transcript_hook_url, timeoutMs: runtime.hook_timeout_ms },
    widget: { theme: channel.widget ?? {}, allowedOrigins: channel.allowed_origins ?? [], proactive: rules.proactive },
    limits: {
      turnsPerConversation: rules.max_turns_per_conversation,
      pendingTurns: rules.max_pending_turns,
      turnsPerMinute: rules.turns_per_minute,
      replyTimeoutS: runtime.reply_timeout_s,
    },
    person: {
      replyTimeoutS: runtime.person_reply_timeout_s,
      waitNoticeS: runtime.person_wait_notice_s,
      waitNotice: runtime.person_wait_notice,
    },
    voice: {
      recognition: runtime.speech_recognition,
      synthesis: runtime.speech_synthesis,
      mode: runtime.voice_mode,
      speech: speechOf(spec),
    },
    privacy: {
      keep: runtime.privacy?.keep ?? 'everything',
      redact: runtime.privacy?.redact ?? patternKinds,
      retentionDays: runtime.privacy?.retention_days,
    },
    agent: agentInfo(row.agent_name, specText),
    spec: specView(spec, row.pinned_version ?? row.latest_version, row.knowledge_base_id),
    versions: versionsOf(row.agent_versions),
  };
}

/** A deployment's stored split; one that cannot be read splits nothing. */
function versionsOf(text: string | null): VersionShare[] {
  const shares = fromJsonColumn<VersionShare[]>(text);
  return Array.isArray(shares) ? shares : [];
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
