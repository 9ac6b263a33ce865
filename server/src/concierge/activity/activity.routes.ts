import { z } from 'zod';
import { defineRoute, type RouteDef } from '../../http/route.js';
import type { RouteRequest } from '../../http/exchange.js';
import { principalKey } from '../../http/principal.js';
import type { ActivityHub } from './activity.hub.js';

/** How often an open activity stream asks whether its credential still holds. */
export const ACTIVITY_RECHECK_MS = 60_000;

export interface ActivityAccess {
  /** Whether the request's key or console session still holds. */
  holds(req: RouteRequest): Promise<boolean>;
  /** How often an open stream asks: a revoked key or a signed-out session ends it within this. */
  recheckMs: number;
}

/** GET /api/v1/activity (README, A person in the conversation): the customer's conversations as they happen. */
export function activityRoutes(hub: ActivityHub, access: ActivityAccess): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/activity',
      operationId: 'streamActivity',
      summary:
        "Server-Sent Events: every stored widget event of the customer's conversations (`{conversation_id, deployment_id, event}`) and every change of who handles one (`event: handoff`), as they are stored, on any node. Each has an `id:`; reconnecting with `Last-Event-ID` resumes from it (a few events may come twice: deduplicate on conversation_id and event.seq). A comment keeps it open (nothing passes 15 s in silence); a reader more than 1 MiB behind is dropped and resumes; a resume whose catch-up is larger than that (or over 2,000 events) gets `event: resync` instead and goes live: read what you show from the API again. At most 10 streams per API key or console user and 50 per customer on each node (then `429` with `Retry-After`); the stream ends within a minute of its key being revoked or its console session ending, and when its node drains. With the console's cookie, EventSource needs no X-Requested-With",
      tag: 'Conversations',
      errors: ['rate_limited'],
      success: {
        status: 200,
        description: 'An endless text/event-stream',
        data: z.string().meta({
          description:
            'id: …\\ndata: {"conversation_id","deployment_id","event":{…}}; or event: handoff with {conversation_id, deployment_id, handler, name, needs_person, reason}',
        }),
        contentType: 'text/event-stream',
        stream: true,
        live: true,
      },
      handler: async ({ principal, req, res }) => {
        const gone = new AbortController();
        // A store that cannot answer is not a refusal: the stream goes on, and is asked again next time.
        const recheck = setInterval(
          () =>
            void access.holds(req).then(
              (holds) => holds || gone.abort(),
              () => {},
            ),
          access.recheckMs,
        ).unref();
        res.once('close', () => {
          clearInterval(recheck);
          gone.abort();
        });
        const last = req.headers['last-event-id'];
        const data = await hub
          .open(principal.customerId, principalKey(principal), typeof last === 'string' ? last : undefined, gone.signal)
          .catch((err: unknown) => {
            clearInterval(recheck);
            throw err;
          });
        return { data, headers: { 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' } };
      },
    }),
  ];
}
