import type { Db } from '../../database.js';
import { findAgentVersion } from '../../agents/agent-version.repository.js';
import { type DeploymentContext, withSpec } from '../../deployments/deployment-context.js';
import { TtlCache } from '../../shared/ttl-cache.js';
import { type ConversationRow, testRunSpec } from './conversation.repository.js';

/** Published versions never change, nor does a test run's spec: remembered a while, boundedly. */
const KEPT_MS = 10 * 60_000;

/**
 * The spec a conversation is answered by (README, Tests and analysis): the spec its test run is of,
 * or, while its deployment splits conversations between versions, the version it got; else the
 * deployment's own.
 */
export class ConversationSpecs {
  readonly #specs = new TtlCache<string | null>(KEPT_MS, 1_000);

  constructor(private readonly db: Db) {}

  async of(
    dep: DeploymentContext,
    conversation: Pick<ConversationRow, 'agent_version' | 'test_run_id' | 'test_mocks'>,
  ): Promise<DeploymentContext> {
    if (conversation.test_run_id) {
      const runId = conversation.test_run_id;
      const spec = await this.#remembered(`run:${runId}`, () => testRunSpec(this.db, runId));
      const mocks = conversation.test_mocks ? (JSON.parse(conversation.test_mocks) as Record<string, unknown>) : {};
      if (spec !== null)
        return withSpec(dep, spec, conversation.agent_version ?? dep.spec.version, {
          runId,
          mocks,
        });
    }
    // Without a split, a publish or a pin applies to open conversations from their next turn; a split
    // keeps each conversation on the version it got to its end, so the versions can be compared.
    const version = conversation.agent_version;
    if (version === null || version === dep.spec.version || !dep.versions.some((s) => s.version === version))
      return dep;
    const spec = await this.#remembered(
      `${dep.agentId}:${version}`,
      async () => (await findAgentVersion(this.db, dep.agentId, version))?.agent_spec ?? null,
    );
    return spec === null ? dep : withSpec(dep, spec, version);
  }

  async #remembered(key: string, read: () => Promise<string | null>): Promise<string | null> {
    const known = this.#specs.get(key);
    if (known !== undefined) return known;
    const spec = await read();
    if (spec !== null) this.#specs.set(key, spec);
    return spec;
  }
}
