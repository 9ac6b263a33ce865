import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';
import {
  type ConversationRow,
  lockConversation,
  requestsWaitingSince,
  setWaitAside,
  type WaitingCursor,
} from './conversation.repository.js';

/** The shortest `person_wait_notice_s` that tells anything: what the sweep asks the store for. */
const SHORTEST_NOTICE_S = 1;
/** Requests read at a time, and at most per pass: one customer's many long waits cannot hide another's due one. */
const PAGE = 100;
const PAGES_PER_PASS = 10;

/**
 * Tells a visitor whose request for a person nobody took in the deployment's
 * `person_wait_notice_s` (README, A person in the conversation), once per request: a stored
 * `still_waiting` event with the customer's words, or none for the widget's own. Each
 * conversation is re-checked under its lock, so of several nodes one tells it.
 */
export class WaitNotices {
  constructor(private readonly parts: { db: Db; deployments: DeploymentDirectory; events: EventRecorder }) {}

  async sweep(): Promise<number> {
    const before = isoIn(-SHORTEST_NOTICE_S * 1000);
    let told = 0;
    let after: WaitingCursor | undefined;
    for (let page = 0; page < PAGES_PER_PASS; page++) {
      const waiting = await requestsWaitingSince(this.parts.db, before, after, PAGE);
      for (const candidate of waiting) if (await this.tell(candidate)) told++;
      if (waiting.length < PAGE) break;
      const last = waiting.at(-1)!;
      after = { handoff_at: last.handoff_at!, id: last.id };
    }
    return told;
  }

  /** Tells this request's visitor if its deployment's wait has passed; true when told. */
  private async tell(candidate: ConversationRow): Promise<boolean> {
    const { db, deployments, events } = this.parts;
    const dep = await deployments.get(candidate.deployment_id);
    if (!dep) return false;
    // A deployment that tells nothing: the request leaves the walk at once, rather than be read every pass.
    if (!dep.person.waitNoticeS) {
      await setWaitAside(db, candidate.id, candidate.handoff_at!, isoNow());
      return false;
    }
    if (candidate.handoff_at! > isoIn(-dep.person.waitNoticeS * 1000)) return false;
    const text = dep.person.waitNotice;
    return events.write(candidate.id, async (unit) => {
      const c = await lockConversation(unit.trx, candidate.id);
      const still =
        c?.status === 'open' &&
        c.needs_person === 1 &&
        c.handler === 'agent' &&
        c.handoff_at === candidate.handoff_at &&
        (c.wait_told_at === null || c.wait_told_at < c.handoff_at!);
      if (!still) return false;
      await unit.record(
        { dep, conversationId: c.id },
        {
          events: [{ type: 'still_waiting', ...(text ? { text } : {}) }],
          transcript: [],
          conversation: { wait_told_at: isoNow() },
        },
      );
      return true;
    });
  }
}
