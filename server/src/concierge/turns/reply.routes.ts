import { AppError } from '../../errors.js';
import { clientAddress, type ProxyTrust } from '../../http/client-address.js';
import { type RouteDef, defineRoute, validate } from '../../http/route.js';
import { KiB, parseJson } from '../../http/raw-body.js';
import { WindowCounter } from '../../shared/window-counter.js';
import { idParams } from '../../shared/schemas.js';
import { finalReplyBody, replyAcceptedSchema, replyBody, replyBodySchemaFor, replyPartBody } from './reply.schemas.js';
import type { ReplyService } from './reply.service.js';

export interface ReplyLimits {
  /** Badly signed replies one client address may send per minute; then every badly signed one is 429 until the minute ends. */
  signatureFailuresPerMinute: number;
  trustProxy: ProxyTrust;
}

export function replyRoutes(replies: ReplyService, limits: ReplyLimits): RouteDef[] {
  const failures = new WindowCounter(limits.signatureFailuresPerMinute);
  return [
    defineRoute({
      method: 'post',
      path: '/embed/concierge/:id/replies',
      operationId: 'deliverDeferredReply',
      summary:
        "The customer's server delivers the reply to an acknowledged turn (signed with X-Service-Signature), whole or first in parts (a body with `part`); one that overtakes the hook's 2xx waits up to 2 s for the acknowledgement before 409 turn_not_acknowledged",
      tag: 'Concierge',
      auth: false,
      params: idParams,
      body: replyBody,
      rawBody: { limit: 64 * KiB },
      errors: [
        'payload_too_large',
        'unsupported_media_type',
        'not_found',
        'invalid_signature',
        'rate_limited',
        'invalid_json',
        'invalid_request',
        'turn_not_found',
        'turn_not_acknowledged',
        'turn_not_pending',
        'turn_already_resolved',
        'part_conflict',
        'invalid_state',
        'unavailable',
      ],
      success: {
        status: 202,
        description:
          'Stored and on its way to the widget; 200 with duplicate: true for an identical repeat (of the reply, or of a part)',
        data: replyAcceptedSchema,
      },
      handler: async ({ params, raw, req }) => {
        const signature = req.headers['x-service-signature'];
        // The order README, The deferred reply gives: signature on the raw bytes first, then JSON, then the body's shape.
        const dep = await replies
          .verifyReply(params.id, raw!, typeof signature === 'string' ? signature : undefined)
          .catch((err: unknown) => {
            if (!(err instanceof AppError && err.code === 'invalid_signature')) throw err;
            // Guessing signatures is slowed down per address; a correctly signed reply is never limited.
            const address = clientAddress(req, limits.trustProxy);
            const blocked = failures.refuse(address);
            if (!blocked) throw err;
            throw new AppError(
              'rate_limited',
              `More than ${limits.signatureFailuresPerMinute} badly signed replies from this address in a minute; retry after the time in Retry-After`,
              undefined,
              blocked,
            );
          });
        const body = parseJson(raw!);
        const schema = replyBodySchemaFor(body);
        const result =
          schema === replyPartBody
            ? await replies.acceptPart(dep, validate(replyPartBody, body, 'body'))
            : await replies.acceptReply(dep, validate(finalReplyBody, body, 'body'));
        return { status: result.duplicate ? 200 : 202, data: result };
      },
    }),
  ];
}
