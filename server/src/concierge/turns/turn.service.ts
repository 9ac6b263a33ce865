import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import { isoIn } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import { SILENT_AFTER_MS } from '../../nodes/node-heartbeat.js';
import type { Db } from '../../database.js';
import { type ConversationRow, findConversation, lockConversation } from '../conversations/conversation.repository.js';
import type { Heard } from '../conversations/heard.js';
import { turnLifecycle } from '../conversations/turn.lifecycle.js';
import type { Feedback, TurnInput } from '../conversations/turn.types.js';
import { findTurnByClientId, textsBefore, turnLoad, type TurnRow } from '../conversations/turn.repository.js';
import { orphanedTurns, takeOverTurn } from '../conversations/turn-sweep.repository.js';
import type { DeploymentContext, DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { HOOK_RETRY_DELAYS_MS } from '../deliveries/hook.client.js';
import { answerWith, type Responders } from './responder.js';
import { TurnAnswering } from './turn-answering.js';
import type { KnowledgeRetrieval } from '../../knowledge/knowledge-retrieval.js';
import { followsUp } from '../../knowledge/knowledge-words.js';
import type { PageService } from '../pages/page.service.js';
import type { ConversationSpecs } from '../conversations/conversation-spec.js';

export type { TurnInput };

/** A turn taken (or recognised as a resend), refused with the reason the widget is told, the conversation ended by it, or gone (erased). */
export type TurnSubmission =
  | { outcome: 'accepted' | 'duplicate'; turnId: string }
  | { outcome: 'refused'; error: AppError }
  | { outcome: 'ended' | 'gone' };

export interface TurnServiceParts {
  db: Db;
  /** This node (see NodeHeartbeat): the turns it takes are its to call the hook for. */
  nodeId: string;
  deployments: DeploymentDirectory;
  conversations: ConversationService;
  events: EventRecorder;
  logger: Logger;
  /** Work that meets a store outage is logged through it. */
  health: StoreHealth;
  /** Who answers a deployment's turns: its hook, its agent's model or its knowledge base. */
  responders: Responders;
  /** Finds the agent's knowledge base passages for a turn (README, Answers from your documents). */
  knowledge: Pick<KnowledgeRetrieval, 'passagesFor'>;
  /** Where the visitor is (README, Greeting visitors first). */
  pages: Pick<PageService, 'pageOf'>;
  /** The spec each conversation is answered by: its version's, or its test run's (README, Tests and analysis). */
  specs: Pick<ConversationSpecs, 'of'>;
  /** Finds the names and addresses in a visitor's turn before it is stored, where its deployment asks for them. */
  personal?: { find(dep: DeploymentContext, conversationId: string, text: string): Promise<void> };
}

export interface TurnServiceSettings {
  /** How long a stop waits for hook calls in flight: a hook that answers at once, as it should, is never cut off. */
  shutdownGraceMs: number;
}

export const TURN_DEFAULTS = { hookRetryDelaysMs: HOOK_RETRY_DELAYS_MS, shutdownGraceMs: 5_000 };

/** Turns a follow-up may lean on, back to the last question that stood on its own. */
const LEANS_ON_TURNS = 3;

/**
 * A turn from the visitor to the customer's answer: a turn is taken within the deployment's
 * limits, its hook is called (retried, signed), and the answer moves it (see turnLifecycle).
 */
export class TurnService {
  /** Turns on their way into the store (each may start a hook call). */
  readonly #taking = new Set<Promise<unknown>>();
  /** Hook calls and the writes of their answers. */
  readonly #inFlight = new Set<Promise<unknown>>();
  /**
   * Aborted when a shutdown has waited long enough: hook calls still in flight are cut off (their
   * turns fail, so the visitor may ask again) and writes waiting for the store give up.
   */
  readonly #stopping = new AbortController();

  constructor(
    private readonly parts: TurnServiceParts,
    private readonly settings: TurnServiceSettings,
  ) {
    // Every hook call in flight listens to it: hundreds at once are normal, not a leak.
    setMaxListeners(0, this.#stopping.signal);
  }

  /** Takes a visitor's turn; an inactive deployment takes none (`deployment_inactive`, which ends the socket). */
  async submit(known: DeploymentContext, conversationId: string, input: TurnInput): Promise<TurnSubmission> {
    // In flight from the start: a stop waits for a turn still on its way into the store, and then
    // for the hook call it starts, instead of leaving it pending for the next start's sweep.
    const taking = this.#take(known, conversationId, input);
    this.#taking.add(taking);
    try {
      return await taking;
    } finally {
      this.#taking.delete(taking);
    }
  }

  async #take(known: DeploymentContext, conversationId: string, input: TurnInput): Promise<TurnSubmission> {
    const { deployments, conversations, events } = this.parts;
    const dep = (await deployments.get(known.id)) ?? known;
    if (dep.status !== 'active') throw new AppError('deployment_inactive', 'deployment inactive');
    // Names and addresses are found before the turn is stored, where its deployment asks (README, Privacy: what is kept).
    await this.parts.personal?.find(dep, conversationId, input.text);
    const at = { dep, conversationId };
    // Refusals are returned from the unit, not thrown: a throw would roll back its whole batch.
    const { submission, started } = await events.write(
      conversationId,
      async (unit): Promise<{ submission: TurnSubmission; started?: [ConversationRow, TurnRow] }> => {
        const conversation = await lockConversation(unit.trx, conversationId);
        if (!conversation) return { submission: { outcome: 'gone' } };
        if (conversation.status !== 'open') return refused('conversation_ended', 'The conversation has ended');
        const existing = await findTurnByClientId(unit.trx, conversationId, input.client_turn_id);
        if (existing) return { submission: { outcome: 'duplicate', turnId: existing.id } };
        if (conversation.turn_count >= dep.limits.turnsPerConversation) {
          await conversations.endWithin(unit, at, 'max_turns');
          return { submission: { outcome: 'ended' } };
        }
        const load = await turnLoad(unit.trx, conversationId, isoIn(-60_000));
        if (load.waiting >= dep.limits.pendingTurns)
          return refused('too_many_pending_turns', `At most ${dep.limits.pendingTurns} turns may wait for a reply`);
        if (load.recent >= dep.limits.turnsPerMinute)
          return refused('rate_limited', `At most ${dep.limits.turnsPerMinute} turns a minute`);
        const turn = await turnLifecycle.take(unit, at, conversation, input, this.parts.nodeId);
        return { submission: { outcome: 'accepted', turnId: turn.id }, started: [conversation, turn] };
      },
    );
    // A turn a person handles was taken acknowledged: no hook call.
    if (started && started[1].status === 'pending') this.#track(this.#respond(dep, ...started));
    return submission;
  }

  /**
   * Takes over the turns of nodes gone silent (README, Running several nodes): a node killed
   * between a hook call's start and its answer left its turns pending, one killed while its model
   * wrote a reply left it acknowledged. Each is claimed from the silent node (so of several live
   * nodes one answers it) and answered again: a hook with the turn's own `delivery_id`, so the
   * customer's deduplication holds; a model from the start, its reply resolving the turn once.
   * Returns how many were taken over.
   */
  async takeOverSilentNodes(limit = 50): Promise<number> {
    const { db, nodeId, deployments, logger } = this.parts;
    if (this.#stopping.signal.aborted) return 0;
    let taken = 0;
    for (const turn of await orphanedTurns(db, nodeId, isoIn(-SILENT_AFTER_MS), limit)) {
      if (!(await takeOverTurn(db, turn.id, turn.hook_node!, nodeId))) continue;
      const conversation = await findConversation(db, turn.conversation_id);
      const dep = conversation && (await deployments.get(conversation.deployment_id));
      if (!conversation || !dep) continue;
      logger.info(
        { turn_id: turn.id, deployment_id: dep.id, silent_node: turn.hook_node },
        'answering a turn whose node went silent',
      );
      this.#track(this.#respond(dep, conversation, { ...turn, hook_node: nodeId }));
      taken++;
    }
    return taken;
  }

  /**
   * The visitor's rating of a reply (README, Knowing how it goes). A rating the deployment does
   * not take, or of a turn this conversation has not had answered, is refused (`invalid_message`).
   */
  async rate(dep: DeploymentContext, conversationId: string, turnId: string, feedback: Feedback): Promise<void> {
    if (dep.widget.theme.feedback === false)
      throw new AppError('invalid_message', 'Feedback is off for this deployment');
    const rated = await this.parts.events.write(conversationId, (unit) =>
      turnLifecycle.rate(unit, { dep, conversationId }, turnId, feedback),
    );
    if (rated === 'not_found') throw new AppError('invalid_message', 'No such turn in this conversation');
    if (rated === 'not_answered') throw new AppError('invalid_message', 'Only a turn with its reply can be rated');
  }

  /** What the visitor heard of a turn's spoken reply, as the widget reported it; a turn not of this conversation changes nothing. */
  async heard(dep: DeploymentContext, conversationId: string, turnId: string, heard: Heard): Promise<void> {
    await this.parts.events.write(conversationId, (unit) =>
      turnLifecycle.heard(unit, { dep, conversationId }, turnId, heard),
    );
  }

  /** A hands-free turn's reply began to be heard `ms` after the visitor stopped speaking (README, Hands-free voice). */
  async firstAudio(dep: DeploymentContext, conversationId: string, turnId: string, ms: number): Promise<void> {
    await this.parts.events.write(conversationId, (unit) =>
      turnLifecycle.firstAudio(unit, { dep, conversationId }, turnId, ms),
    );
  }

  /**
   * Graceful shutdown: waits the grace period for turns being taken, hook calls in flight and the
   * writes of their answers, then cuts off the rest. A hook call cut off fails its turn (`hook_failed`); a write
   * the store never took leaves its turn `pending`, for the stale-pending sweep of the next start.
   */
  async drain(): Promise<void> {
    const cut = setTimeout(() => this.#stopping.abort(), this.settings.shutdownGraceMs);
    const cutOff = new Promise<void>((resolve) =>
      this.#stopping.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    // Turns being taken are waited for until the cut only: a store that is down would hold them for good.
    while (this.#taking.size && !this.#stopping.signal.aborted)
      await Promise.race([Promise.allSettled([...this.#taking]), cutOff]);
    while (this.#inFlight.size) await Promise.allSettled([...this.#inFlight]);
    clearTimeout(cut);
  }

  #track(work: Promise<unknown>): void {
    // A hook answer the store never took (a stop during an outage) is an outage, logged once like the rest.
    const tracked = work
      .catch((err) => void this.parts.health.failed(err, 'turn processing'))
      .finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  /**
   * The turn goes to whoever answers its deployment's turns, with its agent's knowledge base passages
   * (a search that fails leaves the turn without them, never unanswered); a stop cuts the call off.
   */
  async #respond(deployment: DeploymentContext, conversation: ConversationRow, turn: TurnRow): Promise<void> {
    const dep = await this.parts.specs.of(deployment, conversation);
    const earlier = () =>
      this.#leansOn(turn).catch((err) => (this.parts.health.failed(err, 'reading the turns before'), []));
    const search = (leansOn: string[]) =>
      this.parts.knowledge
        .passagesFor(dep.customerId, dep.spec.knowledgeBaseId, turn.text, {
          leansOn,
          language: turn.language ?? dep.agent.language,
        })
        .catch((err) => (this.parts.health.failed(err, 'searching the knowledge base'), []));
    // The turns before matter only to a search: an agent without a knowledge base reads none of them.
    const hasBase = dep.spec.knowledgeBaseId !== null;
    let leansOn = hasBase && followsUp(turn.text) ? await earlier() : [];
    let passages = hasBase ? await search(leansOn) : undefined;
    // A question whose own words find nothing ("do I need to tell you before?") leans on the ones before.
    if (passages && !passages.length && !leansOn.length) {
      leansOn = await earlier();
      if (leansOn.length) passages = await search(leansOn);
    }
    // The page's events are read back from the store: one that cannot say sends the page without them.
    const page = await this.parts.pages.pageOf(conversation, turn).catch((err) => {
      this.parts.health.failed(err, "reading the page's events");
      return { url: turn.page_url, title: turn.page_title, context: null, events: [] };
    });
    const { events, health, conversations, responders } = this.parts;
    const answering = new TurnAnswering(
      { events, health, conversations },
      dep,
      conversation,
      turn,
      { passages, page, leansOn },
      this.#stopping.signal,
    );
    return answerWith(responders, answering);
  }

  /**
   * The questions a follow-up leans on (README, Answers from your documents), newest first: the
   * turns before it back to the last one that stood on its own (three at most).
   */
  async #leansOn(turn: TurnRow): Promise<string[]> {
    const leansOn: string[] = [];
    for (const text of await textsBefore(this.parts.db, turn, LEANS_ON_TURNS)) {
      leansOn.push(text);
      if (!followsUp(text)) break;
    }
    return leansOn;
  }
}

const refused = (code: 'conversation_ended' | 'too_many_pending_turns' | 'rate_limited', message: string) => ({
  submission: { outcome: 'refused', error: new AppError(code, message) } as TurnSubmission,
});
