import type {
  KnowledgeResponder as KnowledgeSpec,
  ModelResponder as ModelSpec,
  ResponderSpec,
} from '../../agents/agent-responder.js';
import type { Answering } from './answering.js';

/**
 * What answers a pending turn (README, An agent without a server): the customer's hook, the
 * agent's model, or its knowledge base, each under its part of the agent's spec. It answers through
 * {@link Answering}, and the turn core records each move; the core does not know which runs.
 */
export interface Responder<S extends ResponderSpec> {
  /** Resolves once the turn's answer (or failure) is stored. */
  answer(answering: Answering, spec: S): Promise<void>;
}

/** Who answers, by the `type` of the agent's responder spec. */
export interface Responders {
  hook: Responder<Extract<ResponderSpec, { type: 'hook' }>>;
  model: Responder<ModelSpec>;
  knowledge: Responder<KnowledgeSpec>;
}

/** Hands the turn to whoever the deployment's agent names, with its part of the spec. */
export function answerWith(responders: Responders, answering: Answering): Promise<void> {
  const spec = answering.dep.spec.responder;
  switch (spec.type) {
    case 'model':
      return responders.model.answer(answering, spec);
    case 'knowledge':
      return responders.knowledge.answer(answering, spec);
    case 'hook':
      return responders.hook.answer(answering, spec);
  }
}
