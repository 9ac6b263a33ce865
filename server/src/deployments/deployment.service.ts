import type { Role } from '#protocol/roles';
import { urlSeenBy } from '../shared/seen-by-role.js';
import { requireAgent } from '../agents/agent.service.js';
import { responderOf } from '../agents/agent-responder.js';
import { findAgentVersion } from '../agents/agent-version.repository.js';
import { AppError, invalidState, notFound } from '../errors.js';
import { type Page, pageOf } from '../http/pagination.js';
import { fromJsonColumn, toJsonColumn } from '../shared/json-column.js';
import { newId } from '../shared/random.js';
import { isoIn, isoNow } from '../shared/time.js';
import type { Db } from '../database.js';
import { type Audit, type AuditEntry, auditEntry, recorded, type Writes } from '../audit/audit-trail.js';
import { privacyChange } from './privacy-change.js';
import {
  type DeploymentFilter,
  type DeploymentPatch,
  type DeploymentView,
  deleteDeployment,
  findDeployment,
  insertDeployment,
  listDeployments,
  updateDeployment,
} from './deployment.repository.js';
import type { CreateDeploymentInput, Deployment, UpdateDeploymentInput } from './deployment.schemas.js';
import { generateSigningSecret } from './signing-secret.js';

export function toDeployment(row: DeploymentView): Deployment {
  return {
    id: row.id,
    agent_id: row.agent_id,
    environment: row.environment,
    status: row.status,
    agent_name: row.agent_name,
    call_direction: row.call_direction,
    agent_version: row.agent_version,
    versions: fromJsonColumn(row.agent_versions),
    engagement_rules: fromJsonColumn(row.engagement_rules),
    channel_config: fromJsonColumn(row.channel_config),
    runtime_config: fromJsonColumn(row.runtime_config),
    deployed_at: row.deployed_at,
    transcript_hook_status: row.transcript_hook_status,
    transcript_hook_disabled_at: row.transcript_hook_disabled_at,
    transcript_hook_disabled_reason: row.transcript_hook_disabled_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * A deployment as `role` may read it (README, Your team): the agent role sees its hook and
 * transcript hook as origins only (a path or query may carry the customer's token).
 */
export function deploymentSeenBy(role: Role): (deployment: Deployment) => Deployment {
  if (role !== 'agent') return (deployment) => deployment;
  return (deployment) => {
    const channel = deployment.channel_config as Record<string, unknown> | null;
    if (!channel) return deployment;
    const seen = { ...channel };
    for (const key of ['hook_url', 'transcript_hook_url'])
      if (typeof seen[key] === 'string') seen[key] = urlSeenBy(role, seen[key]);
    return { ...deployment, channel_config: seen };
  };
}

async function requireDeployment(db: Db, customerId: string, id: string): Promise<DeploymentView> {
  const row = await findDeployment(db, customerId, id);
  if (!row) throw notFound('Deployment');
  return row;
}

/** Each version a deployment splits its conversations between must exist (README, Tests and analysis). */
async function requireVersions(db: Db, agentId: string, shares: { version: number }[] | null): Promise<void> {
  for (const [i, share] of (shares ?? []).entries())
    if (!(await findAgentVersion(db, agentId, share.version)))
      throw new AppError('invalid_request', 'Invalid body', [
        { path: `versions.${i}.version`, message: `The agent has no published version ${share.version}` },
      ]);
}

/** A pinned version must exist (README, The management API); null follows the latest. */
async function requireVersion(db: Db, agentId: string, version: number | null): Promise<void> {
  if (version === null || (await findAgentVersion(db, agentId, version))) return;
  throw new AppError('invalid_request', 'Invalid body', [
    { path: 'agent_version', message: `The agent has no published version ${version}` },
  ]);
}

const TRANSCRIPT_TARGET_ENABLED = {
  transcript_hook_status: 'active',
  transcript_hook_disabled_at: null,
  transcript_hook_disabled_reason: null,
} as const;

const transcriptUrlOf = (channelConfigText: string): unknown =>
  fromJsonColumn<{ transcript_hook_url?: unknown }>(channelConfigText).transcript_hook_url;

const hasHookUrl = (channelConfigText: string): boolean =>
  typeof fromJsonColumn<{ hook_url?: unknown }>(channelConfigText).hook_url === 'string';

/**
 * Whether the deployment's turns go to its hook: they do unless the agent spec it serves (the
 * pinned version, or the latest published) answers with a model (README, An agent without a server).
 */
async function answersThroughHook(db: Db, customerId: string, row: DeploymentView): Promise<boolean> {
  const spec =
    row.agent_version === null
      ? (await requireAgent(db, customerId, row.agent_id)).agent_spec
      : (await findAgentVersion(db, row.agent_id, row.agent_version))?.agent_spec;
  return responderOf(fromJsonColumn<Record<string, unknown>>(spec ?? null) ?? {}).type === 'hook';
}

/** Who hears of a deployment's changes. */
export interface DeploymentListeners {
  /**
   * After every change: sessions forget what they remember of it, and an inactive deployment's
   * open conversations end (on every deactivate, so a retry finishes the job).
   */
  conversations: { deploymentChanged(deploymentId: string): Promise<void> };
  /** Its transcript target was enabled again: its waiting events go now. */
  transcripts: { resume(deploymentId: string): Promise<void> };
}

/**
 * A customer's deployments. Every change is announced here, after it is stored, whatever asked
 * for it: a new way to change a deployment cannot forget to end its conversations.
 */
export class DeploymentService {
  constructor(private readonly parts: { db: Db; writes: Writes; listeners: DeploymentListeners }) {}

  async list(customerId: string, filter: DeploymentFilter, page: Page) {
    return pageOf(page, await listDeployments(this.parts.db, customerId, filter, page), toDeployment);
  }

  async get(customerId: string, id: string): Promise<Deployment> {
    return toDeployment(await requireDeployment(this.parts.db, customerId, id));
  }

  async create(customerId: string, input: CreateDeploymentInput, audit: Audit) {
    const { db } = this.parts;
    const agent = await requireAgent(db, customerId, input.agent_id);
    await requireVersion(db, agent.id, input.agent_version);
    await requireVersions(db, agent.id, input.versions);
    const now = isoNow();
    const row = {
      id: newId(),
      customer_id: customerId,
      agent_id: agent.id,
      environment: input.environment,
      status: 'inactive' as const,
      call_direction: input.call_direction,
      agent_version: input.agent_version,
      agent_versions: input.versions ? JSON.stringify(input.versions) : null,
      channel_config: toJsonColumn(input.channel_config),
      engagement_rules: toJsonColumn(input.engagement_rules),
      runtime_config: toJsonColumn(input.runtime_config),
      signing_secret: generateSigningSecret(),
      previous_secret: null,
      previous_secret_expires_at: null,
      deployed_at: null,
      ...TRANSCRIPT_TARGET_ENABLED,
      created_at: now,
      updated_at: now,
    };
    await recorded(
      this.parts.writes,
      audit,
      auditEntry('deployment.created', row.id, { changes: Object.keys(input) }),
      (trx) => insertDeployment(trx, row),
    );
    return { ...toDeployment({ ...row, agent_name: agent.name }), signing_secret: row.signing_secret };
  }

  async update(customerId: string, id: string, input: UpdateDeploymentInput, audit: Audit): Promise<Deployment> {
    const { db } = this.parts;
    const row = await requireDeployment(db, customerId, id);
    const patch: DeploymentPatch = { updated_at: isoNow() };
    if (input.environment !== undefined) patch.environment = input.environment;
    if (input.call_direction !== undefined) patch.call_direction = input.call_direction;
    if (input.agent_version !== undefined) {
      await requireVersion(db, row.agent_id, input.agent_version);
      patch.agent_version = input.agent_version;
    }
    if (input.versions !== undefined) {
      await requireVersions(db, row.agent_id, input.versions);
      patch.agent_versions = input.versions ? JSON.stringify(input.versions) : null;
    }
    if (input.channel_config !== undefined) {
      patch.channel_config = toJsonColumn(input.channel_config);
      // A new transcript URL is a new target: whatever disabled the old one says nothing of it.
      if (transcriptUrlOf(patch.channel_config) !== transcriptUrlOf(row.channel_config))
        Object.assign(patch, TRANSCRIPT_TARGET_ENABLED);
    }
    if (input.engagement_rules !== undefined) patch.engagement_rules = toJsonColumn(input.engagement_rules);
    if (input.runtime_config !== undefined) patch.runtime_config = toJsonColumn(input.runtime_config);
    // Activation required a hook_url; removing it from a live deployment would strand its visitors.
    if (
      row.status === 'active' &&
      patch.channel_config !== undefined &&
      !hasHookUrl(patch.channel_config) &&
      (await answersThroughHook(db, customerId, { ...row, agent_version: patch.agent_version ?? row.agent_version }))
    ) {
      throw invalidState('An active deployment needs channel_config.hook_url; deactivate it first to remove the hook');
    }
    const privacy =
      patch.runtime_config === undefined ? undefined : privacyChange(row.runtime_config, patch.runtime_config);
    const changes = { changes: Object.keys(input) };
    return this.#changed(
      row,
      patch,
      audit,
      privacy
        ? auditEntry('deployment.privacy_changed', id, { ...changes, detail: privacy })
        : auditEntry('deployment.updated', id, changes),
    );
  }

  async remove(customerId: string, id: string, audit: Audit) {
    const { db, listeners } = this.parts;
    const row = await requireDeployment(db, customerId, id);
    if (row.status === 'active') throw invalidState('The deployment is active; deactivate it before deleting it');
    await recorded(this.parts.writes, audit, auditEntry('deployment.deleted', id, { changes: [] }), (trx) =>
      deleteDeployment(trx, customerId, id),
    );
    await listeners.conversations.deploymentChanged(id);
    return { id, deleted: true as const };
  }

  async activate(customerId: string, id: string, audit: Audit): Promise<Deployment> {
    const { db } = this.parts;
    const row = await requireDeployment(db, customerId, id);
    if (row.status === 'active') return this.#unchanged(row);
    const agent = await requireAgent(db, customerId, row.agent_id);
    const missing: string[] = [];
    if (agent.status !== 'published') missing.push(`a published agent (the agent is '${agent.status}')`);
    if (!hasHookUrl(row.channel_config) && (await answersThroughHook(db, customerId, row)))
      missing.push('channel_config.hook_url (or an agent that answers with a model)');
    if (missing.length) throw invalidState(`Cannot activate: missing ${missing.join(' and ')}`);
    const now = isoNow();
    return this.#changed(
      row,
      { status: 'active', deployed_at: now, updated_at: now },
      audit,
      auditEntry('deployment.activated', id, { changes: ['status'] }),
    );
  }

  async deactivate(customerId: string, id: string, audit: Audit): Promise<Deployment> {
    const row = await requireDeployment(this.parts.db, customerId, id);
    if (row.status === 'inactive') return this.#unchanged(row);
    return this.#changed(
      row,
      { status: 'inactive', updated_at: isoNow() },
      audit,
      auditEntry('deployment.deactivated', id, { changes: ['status'] }),
    );
  }

  /** Delivery to a disabled transcript target resumes, in order, from the event that waited first. */
  async enableTranscripts(customerId: string, id: string, audit: Audit): Promise<Deployment> {
    const { db, listeners } = this.parts;
    const row = await requireDeployment(db, customerId, id);
    if (typeof transcriptUrlOf(row.channel_config) !== 'string')
      throw invalidState('The deployment has no channel_config.transcript_hook_url to enable');
    const disabled = row.transcript_hook_status !== 'active';
    const patch: DeploymentPatch = disabled ? { ...TRANSCRIPT_TARGET_ENABLED, updated_at: isoNow() } : {};
    if (disabled)
      await recorded(
        this.parts.writes,
        audit,
        auditEntry('deployment.transcript_hook_enabled', id, { changes: ['transcript_hook_status'] }),
        (trx) => updateDeployment(trx, customerId, id, patch),
      );
    await listeners.transcripts.resume(id);
    return toDeployment({ ...row, ...patch });
  }

  /** New secret now; the previous one keeps verifying for `graceSeconds` (0: at once invalid). */
  async rotateSecret(customerId: string, id: string, graceSeconds: number, audit: Audit) {
    const { db, listeners } = this.parts;
    const row = await requireDeployment(db, customerId, id);
    const signingSecret = generateSigningSecret();
    const previousExpiresAt = graceSeconds > 0 ? isoIn(graceSeconds * 1000) : null;
    await recorded(
      this.parts.writes,
      audit,
      auditEntry('deployment.secret_rotated', id, { changes: ['signing_secret', 'previous_secret_expires_at'] }),
      (trx) =>
        updateDeployment(trx, customerId, id, {
          signing_secret: signingSecret,
          previous_secret: previousExpiresAt ? row.signing_secret : null,
          previous_secret_expires_at: previousExpiresAt,
          updated_at: isoNow(),
        }),
    );
    await listeners.conversations.deploymentChanged(id);
    return { signing_secret: signingSecret, previous_secret_expires_at: previousExpiresAt };
  }

  /** Stores the patch with its audit record, then announces it. */
  async #changed(row: DeploymentView, patch: DeploymentPatch, audit: Audit, entry: AuditEntry): Promise<Deployment> {
    await recorded(this.parts.writes, audit, entry, (trx) => updateDeployment(trx, row.customer_id, row.id, patch));
    await this.parts.listeners.conversations.deploymentChanged(row.id);
    return toDeployment({ ...row, ...patch });
  }

  /**
   * Already as asked: still announced, so a retry finishes what a failed announcement left (an
   * inactive deployment's conversations still open).
   */
  async #unchanged(row: DeploymentView): Promise<Deployment> {
    await this.parts.listeners.conversations.deploymentChanged(row.id);
    return toDeployment(row);
  }
}
