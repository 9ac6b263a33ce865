import type { Db } from '../../database.js';
import { AppError } from '../../errors.js';
import { isoIn, isoNow } from '../../shared/time.js';
import { type ConversationRow, lockConversation } from '../conversations/conversation.repository.js';
import type { TurnRow } from '../conversations/turn.repository.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';
import type { PageData, ProactiveEvent } from '#protocol/proactive';
import {
  type PageEvent,
  pageEventLoad,
  pageEventsBefore,
  setPageContext,
  setProactiveRule,
} from './page.repository.js';

/** The page events a turn is given: the newest of those since the turn before. */
export const PAGE_EVENTS_PER_TURN = 20;
/**
 * Page events one conversation takes, in all and a minute, whatever sockets and reconnects its page
 * uses: past them `Concierge.trigger` is refused (`rate_limited`), nothing is stored.
 */
export const PAGE_EVENTS_PER_CONVERSATION = { total: 1_000, perMinute: 60 };

/** Where the visitor is as the turn's responder is told (README, Greeting visitors first). */
export interface TurnPage {
  url: string | null;
  title: string | null;
  /** What the page last gave `Concierge.setContext`; null when it gave nothing. */
  context: unknown;
  /** The page's `Concierge.trigger` calls since the visitor's turn before, oldest first. */
  events: PageEvent[];
}

/**
 * What the visitor's page tells the agent (README, Greeting visitors first): its events, stored in
 * the conversation and told to the transcript hook; its context, kept on the conversation; and
 * the greeting rules that approached the visitor, counted for their analytics.
 */
export class PageService {
  constructor(private readonly parts: { db: Db; events: EventRecorder }) {}

  /**
   * `Concierge.trigger(name, data)` in a conversation: a `page_event`, and `page.event` to the
   * transcript hook; refused (`rate_limited`) past {@link PAGE_EVENTS_PER_CONVERSATION}.
   */
  async event(dep: DeploymentContext, conversationId: string, name: string, data: PageData | undefined): Promise<void> {
    const event = { name, ...(data === undefined ? {} : { data }) };
    const refused = await this.parts.events.write(conversationId, async (unit) => {
      // A conversation that ended meanwhile takes nothing more from its page.
      if ((await lockConversation(unit.trx, conversationId))?.status !== 'open') return undefined;
      const load = await pageEventLoad(unit.trx, conversationId, isoIn(-60_000));
      const { total, perMinute } = PAGE_EVENTS_PER_CONVERSATION;
      if (load.total >= total) return `A conversation takes at most ${total} page events`;
      if (load.recent >= perMinute) return `A conversation takes at most ${perMinute} page events a minute`;
      await unit.record(
        { dep, conversationId },
        {
          events: [{ type: 'page_event', ...event }],
          transcript: [{ type: 'page.event', data: event }],
          conversation: { page_event_at: isoNow() },
        },
      );
      return undefined;
    });
    if (refused) throw new AppError('rate_limited', refused);
  }

  /** `Concierge.setContext(data)`: the page's context from now on. */
  async setContext(dep: DeploymentContext, conversationId: string, data: Record<string, unknown>): Promise<void> {
    await setPageContext(this.parts.db, conversationId, dep.id, JSON.stringify(data));
  }

  /**
   * A greeting rule's teaser was shown, or opened the conversation: counted for the rule, which the
   * conversation's turns then count for, if the visitor has not spoken yet. A rule the deployment
   * does not have counts nothing.
   */
  async approached(dep: DeploymentContext, conversationId: string, rule: string, event: ProactiveEvent): Promise<void> {
    if (!dep.widget.proactive.some((r) => r.id === rule)) return;
    await this.parts.events.write(conversationId, async (unit) => {
      await setProactiveRule(unit.trx, conversationId, rule);
      unit.count({ dep, conversationId }, { proactive: { rule, [event]: 1 } });
    });
  }

  /** The page of a turn as its responder is told it; the store is read for events only where the page ever sent one. */
  async pageOf(conversation: ConversationRow, turn: TurnRow): Promise<TurnPage> {
    return {
      url: turn.page_url,
      title: turn.page_title,
      context: conversation.page_context ? JSON.parse(conversation.page_context) : null,
      events: conversation.page_event_at
        ? await pageEventsBefore(this.parts.db, conversation.id, turn.id, PAGE_EVENTS_PER_TURN)
        : [],
    };
  }
}
