import type { ClientMessage } from '#protocol/frames';
import { AppError } from '../../errors.js';
import { WindowCounter } from '../../shared/window-counter.js';
import type { ConversationHandling } from '../conversations/handling.js';
import type { PageService } from '../pages/page.service.js';
import type { TurnService } from '../turns/turn.service.js';
import type { SessionLine } from './session-line.js';

/** Page events, context changes and greeting reports one socket may send a minute. */
export const PAGE_MESSAGES_PER_MINUTE = 60;

/**
 * What a socket's page and visitor tell besides their turns (README, Greeting visitors first; A
 * person in the conversation): the page's events and context, the greeting rules that approached
 * the visitor, a reply's rating, asking for a person.
 */
export class PageMessages {
  /** The page's events, context and greeting reports this minute. */
  readonly #counted = new WindowCounter(PAGE_MESSAGES_PER_MINUTE);

  constructor(
    private readonly line: SessionLine,
    private readonly services: {
      pages: Pick<PageService, 'event' | 'setContext' | 'approached'>;
      handling: ConversationHandling;
      turns: TurnService;
    },
  ) {}

  /** The visitor rates a reply; a refusal is told, the socket stays. */
  rate(message: Extract<ClientMessage, { type: 'feedback' }>): Promise<void> {
    const { dep, conversationId } = this.line;
    return this.#tellRefusal(() => this.services.turns.rate(dep, conversationId!, message.turn_id, message));
  }

  /** Runs `work`; its refusal is told on the open socket instead of ending it. */
  async #tellRefusal(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_message') throw err;
      this.line.tell(err);
    }
  }

  /**
   * What the page tells (README, Greeting visitors first): an event, its context, a greeting rule
   * that approached the visitor. At most {@link PAGE_MESSAGES_PER_MINUTE} a minute per socket: a
   * page that fires events in a loop is told `rate_limited`, and what it sent past that is dropped.
   */
  async fromPage(message: Extract<ClientMessage, { type: 'page_event' | 'context' | 'proactive' }>) {
    if (this.#counted.refuse('page'))
      return this.line.tell(new AppError('rate_limited', `At most ${PAGE_MESSAGES_PER_MINUTE} page events a minute`));
    const { pages } = this.services;
    if (message.type === 'page_event')
      return pages.event(this.line.dep, this.line.conversationId!, message.name, message.data).catch((err: unknown) => {
        if (!(err instanceof AppError) || err.code !== 'rate_limited') throw err;
        this.line.tell(err);
      });
    if (message.type === 'context') return pages.setContext(this.line.dep, this.line.conversationId!, message.data);
    return pages.approached(this.line.dep, this.line.conversationId!, message.rule_id, message.event);
  }

  /** The visitor asks for a person; a conversation that ended meanwhile tells the widget so itself. */
  async askForPerson(): Promise<void> {
    try {
      await this.services.handling.askForPerson(this.line.dep.customerId, this.line.conversationId!);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'invalid_state') throw err;
    }
  }
}
