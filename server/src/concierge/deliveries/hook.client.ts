import type { z } from 'zod';
import { isoNow } from '../../shared/time.js';
import type { turnCreatedBody } from '../outbound.schemas.js';
import type { DeploymentContext } from '../deployment-context.js';
import { type EgressPolicy, type EgressResponse, type Exchange, exchange } from '../egress.js';
import { signatureOf, standardWebhookHeaders } from '../signature.js';

export type HookOutcome = { kind: 'replied'; text: string } | { kind: 'acknowledged' } | { kind: 'rejected'; status: number } | { kind: 'failed'; cause: string };

/** Waits before the second and third attempts. */
export const HOOK_RETRY_DELAYS_MS = [250, 1000] as const;
const MAX_REPLY_CHARS = 10_000;

function syncReplyOf(body: string): string | undefined {
  // Most answers are an empty 202: a thrown parse error per turn cost more than the rest of this file.
  if (!body.trimStart().startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(body) as { reply_text?: unknown };
    const text = parsed?.reply_text;
    return typeof text === 'string' && text.length > 0 && text.length <= MAX_REPLY_CHARS ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The documented reading (README, The turn hook) of one answer; undefined means "try again". */
export function classifyHookResponse(res: EgressResponse): HookOutcome | undefined {
  if (res.status >= 200 && res.status < 300) {
    const text = syncReplyOf(res.body);
    return text === undefined ? { kind: 'acknowledged' } : { kind: 'replied', text };
  }
  if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) return { kind: 'rejected', status: res.status };
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
export async function callTurnHook(attempt: () => Promise<Exchange>, delays: readonly number[] = HOOK_RETRY_DELAYS_MS, signal?: AbortSignal): Promise<HookCall> {
  const exchanges: Exchange[] = [];
  let cause = '';
  for (let i = 0; i <= delays.length; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, delays[i - 1]));
    if (signal?.aborted) return { outcome: { kind: 'failed', cause: `${cause ? `${cause}; ` : ''}the service is stopping` }, exchanges };
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
export function sendTurnCreated(dep: DeploymentContext, url: string, call: TurnCreated, egress: EgressPolicy, how: { signal?: AbortSignal; mark?: 'test' }): Promise<Exchange> {
  const { delivery_id, ...about } = call;
  const body = JSON.stringify({ type: 'turn.created', delivery_id, sent_at: isoNow(), ...(how.mark === 'test' ? { test: true } : {}), ...about });
  const headers = { 'X-Service-Signature': signatureOf(dep.signingSecret, body), 'X-Service-Delivery': delivery_id, ...standardWebhookHeaders(delivery_id, body, dep.secrets) };
  return exchange(url, body, headers, dep.hookTimeoutMs, egress, how.signal);
}
