import type { AgentSpecView } from '../../deployments/deployment-context.js';
import type { ModelTarget } from '../../model-endpoints/model-endpoint.service.js';
import type { JsonModel } from './json-completion.js';

/** Said where a judge, a simulated visitor or an analysis has no model to ask. */
export const NEEDS_A_MODEL =
  "needs a model endpoint: set the agent's evaluation (endpoint_id and model), or let a model answer its turns";

/** Why `who` (a judge, an analysis...) cannot run, in one sentence, from why {@link EvaluationModels.of} found no model. */
export const cannotRun = (who: string, why: string): string =>
  why === NEEDS_A_MODEL ? `${who} ${NEEDS_A_MODEL}` : `${who} cannot run: ${why}`;

/**
 * The model that judges an agent's tests, plays its simulated visitors and analyses its
 * conversations (README, Tests and analysis): the spec's `evaluation` endpoint, else the agent's own
 * model endpoint, else the service's MODEL_URL; the model named by `evaluation.model`, else the
 * agent's. A string says why there is none.
 */
export class EvaluationModels {
  constructor(
    private readonly parts: {
      endpoints: { target(customerId: string, id: string): Promise<ModelTarget | undefined> };
      operator: { url: string; key: string | undefined } | undefined;
    },
  ) {}

  async of(customerId: string, spec: AgentSpecView): Promise<JsonModel | string> {
    const own = spec.responder.type === 'model' ? spec.responder : undefined;
    const model = spec.evaluation.model ?? own?.model;
    const endpointId = spec.evaluation.endpoint_id ?? own?.endpoint_id;
    if (!model) return NEEDS_A_MODEL;
    if (endpointId) {
      const found = await this.parts.endpoints.target(customerId, endpointId).catch((err: Error) => err);
      if (found instanceof Error) return `the model endpoint's key cannot be opened here (${found.message})`;
      return found ? { ...found, model } : `the model endpoint ${endpointId} no longer exists`;
    }
    const { operator } = this.parts;
    return operator ? { baseUrl: operator.url, key: operator.key, model } : NEEDS_A_MODEL;
  }
}
