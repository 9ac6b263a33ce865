import type { z } from 'zod';
import { isoNow } from '../../shared/time.js';
import { hookHandoff, type ToolCallBody, type turnCreatedBody } from '../outbound.schemas.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { type EgressPolicy, egressFor, type EgressResponse, type Exchange, exchange } from '../../shared/egress.js';
import { type ReplyAction, replyActions } from '#protocol/frames';
import { signatureOf, standardWebhookHeaders } from '../signature.js';

/**
 * How the hook answered: `rejected` with `why` is a 2xx the service could not read (a reply with
 * invalid actions); `handoff` is the reason the hook handed the conversation to a person.
 */
export type HookOutcome =
  | { kind: 'replied'; text: string; actions: ReplyAction[]; handoff?: string }
  | { kind: 'acknowledged'; handoff?: string }
  | { kind: 'rejected'; status: number; why?: string }
  | { kind: 'failed'; cause: string };

/** Waits before the second and third attempts. */
export const HOOK_RETRY_DELAYS_MS = [250, 1000] as const;
const MAX_REPLY_CHARS = 10_000;

/** A 2xx answer: a reply in it (with valid actions, if any) resolves the turn; without one it only acknowledges. */
function answerOf(status: number, body: string): HookOutcome {
  // Most answers are an empty 202: a thrown parse error per turn cost more than the rest of this file.
  if (!body.trimStart().startsWith('{')) return { kind: 'acknowledged' };
  let parsed: { reply_text?: unknown; actions?: unknown; handoff?: unknown };
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'acknowledged' };
  }
  const handoff = parsed?.handoff === undefined ? undefined : hookHandoff.safeParse(parsed.handoff);
  if (handoff && !handoff.success) return { kind: 'rejected', status, why: whyOf('handoff', handoff.error) };
  const handedOff = handoff ? { handoff: handoff.data.reason } : {};
  const text = parsed?.reply_text;
  if (!(typeof text === 'string' && text.length > 0 && text.length <= MAX_REPLY_CHARS))
    return { kind: 'acknowledged', ...handedOff };
  if (parsed.actions === undefined) return { kind: 'replied', text, actions: [], ...handedOff };
  const actions = replyActions.safeParse(parsed.actions);
  if (!actions.success) return { kind: 'rejected', status, why: whyOf('actions', actions.error) };
  return { kind: 'replied', text, actions: actions.data, ...handedOff };
}

/** A refusal's fields in words: `actions.0.url: Invalid URL; ...`. */
const whyOf = (root: string, error: z.ZodError) =>
  error.issues.map((i) => `${[root, ...i.path].join('.')}: ${i.message}`).join('; ');

/** The documented reading (README, The turn hook) of one answer; undefined means "try again". */
export function classifyHookResponse(res: EgressResponse): HookOutcome | undefined {
  if (res.status >= 200 && res.status < 300) return answerOf(res.status, res.body);
  if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429)
    return { kind: 'rejected', status: res.status };
  return undefined;
}

/** What calling the hook came to, with every attempt as it went. */
export interface HookCall {
  outcome: HookOutcome;
  exchanges: Exchange[];
}

/**
 * Calls the hook (each attempt signs afresh), retrying 5xx, 408, 429, timeouts and network errors
 * twice. Once `signal` aborts (a shutdown), no further attempt is made.
 */
export async function callTurnHook(
  attempt: () => Promise<Exchange>,
  delays: readonly number[] = HOOK_RETRY_DELAYS_MS,
  signal?: AbortSignal,
): Promise<HookCall> {
  const exchanges: Exchange[] = [];
  let cause = '';
  for (let i = 0; i <= delays.length; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, delays[i - 1]));
    if (signal?.aborted)
      return { outcome: { kind: 'failed', cause: `${cause ? `${cause}; ` : ''}the service is stopping` }, exchanges };
    const ex = await attempt();
    exchanges.push(ex);
    if (ex.response) {
      const outcome = classifyHookResponse(ex.response);
      if (outcome) return { outcome, exchanges };
      cause = `HTTP ${ex.response.status}`;
    } else {
      cause = ex.error?.message ?? 'no answer';
      // A refused target stays refused: trying again would only delay the answer.
      if (ex.error?.kind === 'egress_refused') break;
    }
  }
  return { outcome: { kind: 'failed', cause }, exchanges };
}

/** The fields of a `turn.created` call that are not about when it is sent. */
export type TurnCreated = Omit<z.infer<typeof turnCreatedBody>, 'type' | 'sent_at' | 'test'>;

/** Signs and sends one `turn.created` body (signed afresh, so each attempt has its own `sent_at`); `mark: 'test'` marks a sample. */
export function sendTurnCreated(
  dep: DeploymentContext,
  url: string,
  call: TurnCreated,
  egress: EgressPolicy,
  how: { signal?: AbortSignal; mark?: 'test' },
): Promise<Exchange> {
  const { delivery_id, ...about } = call;
  const body = JSON.stringify({
    type: 'turn.created',
    delivery_id,
    sent_at: isoNow(),
    ...(how.mark === 'test' ? { test: true } : {}),
    ...about,
  });
  return exchange(
    url,
    body,
    signedHeaders(dep, delivery_id, body),
    dep.hook.timeoutMs,
    egressFor(egress, 'hooks', dep.customerId),
    how.signal,
  );
}

/** Both signatures of a body sent to the customer's server (README, Verifying our signatures), and its delivery id. */
const signedHeaders = (dep: DeploymentContext, deliveryId: string, body: string) => ({
  'X-Service-Signature': signatureOf(dep.signing.current, body),
  'X-Service-Delivery': deliveryId,
  ...standardWebhookHeaders(deliveryId, body, dep.signing.secrets),
});

/** Signs and sends a model's tool call to the tool's url, once (a tool may not be safe to call twice). */
export function sendToolCall(
  dep: DeploymentContext,
  url: string,
  call: Omit<ToolCallBody, 'type' | 'sent_at'>,
  timeoutMs: number,
  egress: EgressPolicy,
  signal?: AbortSignal,
): Promise<Exchange> {
  const { call_id, ...about } = call;
  const body = JSON.stringify({ type: 'tool.call', call_id, sent_at: isoNow(), ...about });
  return exchange(
    url,
    body,
    signedHeaders(dep, call_id, body),
    timeoutMs,
    egressFor(egress, 'hooks', dep.customerId),
    signal,
  );
}
