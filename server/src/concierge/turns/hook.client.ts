import { isoNow } from '../../shared/time.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { DeploymentContext } from '../deployment-context.js';
import { EgressRefused, type EgressPolicy, type EgressResponse, postJson } from '../egress.js';
import { signatureOf, standardWebhookHeaders } from '../signature.js';
import type { TurnRow } from './turn.repository.js';

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

/** The contract's reading of one answer; undefined means "try again". */
export function classifyHookResponse(res: EgressResponse): HookOutcome | undefined {
  if (res.status >= 200 && res.status < 300) {
    const text = syncReplyOf(res.body);
    return text === undefined ? { kind: 'acknowledged' } : { kind: 'replied', text };
  }
  if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) return { kind: 'rejected', status: res.status };
  return undefined;
}

/**
 * Calls the hook (each attempt signs afresh), retrying 5xx, 408, 429, timeouts and network errors
 * twice. Once `signal` aborts (a shutdown), no further attempt is made.
 */
export async function callTurnHook(attempt: () => Promise<EgressResponse>, delays: readonly number[] = HOOK_RETRY_DELAYS_MS, signal?: AbortSignal): Promise<HookOutcome> {
  let cause = '';
  for (let i = 0; i <= delays.length; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, delays[i - 1]));
    if (signal?.aborted) return { kind: 'failed', cause: `${cause ? `${cause}; ` : ''}the service is stopping` };
    try {
      const res = await attempt();
      const outcome = classifyHookResponse(res);
      if (outcome) return outcome;
      cause = `HTTP ${res.status}`;
    } catch (err) {
      cause = err instanceof Error ? err.message : String(err);
      // A refused target stays refused: trying again would only delay the answer.
      if (err instanceof EgressRefused) break;
    }
  }
  return { kind: 'failed', cause };
}

/** One signed `turn.created` call to the customer's hook (signed afresh, so each attempt has its own `sent_at`). */
export function postTurn(dep: DeploymentContext, conversation: ConversationRow, turn: TurnRow, replyUrl: string, egress: EgressPolicy, signal: AbortSignal): Promise<EgressResponse> {
  const body = JSON.stringify({
    type: 'turn.created',
    delivery_id: turn.delivery_id,
    sent_at: isoNow(),
    deployment_id: dep.id,
    agent_id: dep.agentId,
    conversation_id: conversation.id,
    turn_id: turn.id,
    user: { sub: conversation.user_sub, name: conversation.user_name, ctx: conversation.user_ctx ? JSON.parse(conversation.user_ctx) : null },
    text: turn.text,
    mode: turn.mode,
    reply_url: replyUrl,
  });
  const headers = { 'X-Service-Signature': signatureOf(dep.signingSecret, body), 'X-Service-Delivery': turn.delivery_id, ...standardWebhookHeaders(turn.delivery_id, body, dep.secrets) };
  return postJson(dep.hookUrl!, body, headers, dep.hookTimeoutMs, egress, signal);
}
