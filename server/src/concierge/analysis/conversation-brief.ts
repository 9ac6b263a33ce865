import type { Db } from '../../database.js';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import { notFound } from '../../errors.js';
import type { EgressPolicy } from '../../shared/egress.js';
import { isoNow } from '../../shared/time.js';
import type { ConversationSpecs } from '../conversations/conversation-spec.js';
import { findConversation } from '../conversations/conversation.repository.js';
import { recentTalk } from '../events/event.repository.js';
import { cannotRun, type EvaluationModels } from '../models/evaluation-model.js';
import { analyse } from './analyst.js';
import { talkText } from './talk-text.js';

/** What a brief reads of a conversation at most: its newest turns, replies and messages. */
const BRIEF_READ = 200;
const SUMMARY_ONLY = { summary: true, fields: [], criteria: [] };
/** A person is waiting for it. */
const BRIEF_TIMEOUT_MS = 15_000;

/** A brief, or why there is none. */
export interface Brief {
  summary: string | null;
  note: string | null;
  at: string;
}

/**
 * A brief of a conversation so far, for a person about to take it over (README, A person in the
 * conversation): the agent's evaluation model summarises it on demand; nothing is stored.
 */
export class ConversationBriefs {
  constructor(
    private readonly parts: {
      db: Db;
      deployments: Pick<DeploymentDirectory, 'get'>;
      specs: Pick<ConversationSpecs, 'of'>;
      models: Pick<EvaluationModels, 'of'>;
      egress: EgressPolicy;
    },
  ) {}

  async brief(customerId: string, conversationId: string): Promise<Brief> {
    const { db, deployments, specs, models, egress } = this.parts;
    const conversation = await findConversation(db, conversationId);
    const deployment =
      conversation?.customer_id === customerId ? await deployments.get(conversation.deployment_id) : undefined;
    if (!conversation || !deployment) throw notFound('Conversation');
    const at = isoNow();
    const talk = talkText(await recentTalk(db, conversationId, BRIEF_READ));
    if (!talk) return { summary: null, note: 'Nothing has been said yet.', at };
    const dep = await specs.of(deployment, conversation);
    const model = await models.of(customerId, dep.spec);
    if (typeof model === 'string') return { summary: null, note: cannotRun('A brief', model), at };
    const answer = await analyse(model, SUMMARY_ONLY, talk, egress, { timeoutMs: BRIEF_TIMEOUT_MS });
    return answer.ok
      ? { summary: answer.value.summary ?? '', note: null, at }
      : { summary: null, note: `The model could not say: ${answer.why}`, at };
  }
}
