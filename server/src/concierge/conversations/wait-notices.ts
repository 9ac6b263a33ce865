import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { DeploymentDirectory } from '../deployment-context.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { lockConversation, requestsWaitingSince } from './conversation.repository.js';

/** The shortest `person_wait_notice_s` a deployment may set: what the sweep asks the store for. */
const SHORTEST_NOTICE_S = 1;

/**
 * Tells a visitor whose request for a person nobody took in the deployment's
 * `person_wait_notice_s` (README, A person in the conversation), once per request: a stored
 * `still_waiting` event with the customer's words, or none for the widget's own. Each
 * conversation is re-checked under its lock, so of several nodes one tells it.
 */
export class WaitNotices {
  constructor(private readonly parts: { db: Db; deployments: DeploymentDirectory; events: EventRecorder }) {}

  async sweep(limit = 100): Promise<number> {
    const { db, deployments, events } = this.parts;
    const waiting = await requestsWaitingSince(db, isoIn(-SHORTEST_NOTICE_S * 1000), limit);
    let told = 0;
    for (const candidate of waiting) {
      const dep = await deployments.get(candidate.deployment_id);
      if (!dep?.personWait.noticeS) continue;
      const due = isoIn(-dep.personWait.noticeS * 1000);
      if (candidate.handoff_at! > due) continue;
      const text = dep.personWait.notice;
      const tellNow = await events.write(candidate.id, async (unit) => {
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
      if (tellNow) told++;
    }
    return told;
  }
}
