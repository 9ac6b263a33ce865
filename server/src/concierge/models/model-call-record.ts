import { unreadableAnswer } from '../deliveries/delivery.record.js';
import type { DeliveryTable } from '../deliveries/delivery.table.js';
import type { Answering } from '../turns/answering.js';
import type { ChatExchange } from './chat-completions.js';

/** A model call's delivery record: the request without the key, the answer (or the words written), and its figures. */
export function modelCallRecord(
  answering: Pick<Answering, 'record'>,
  call: ChatExchange,
  attempt: number,
): DeliveryTable {
  const { failure } = call;
  const kept = call.errorBody ?? call.text;
  const row = answering.record('model', 'model.call', attempt, {
    url: call.url,
    sentAt: call.sentAt,
    durationMs: call.durationMs,
    request: call.request,
    ...(call.status === undefined
      ? {}
      : {
          response: {
            status: call.status,
            headers: call.responseHeaders,
            body: kept,
            bytes: Buffer.byteLength(kept),
          },
        }),
    ...(failure && failure.kind !== 'status' && failure.kind !== 'malformed' && failure.kind !== 'not_a_stream'
      ? {
          error: {
            kind: failure.kind === 'first_token_timeout' ? 'timeout' : failure.kind,
            message: failure.message,
          },
        }
      : {}),
  });
  const figures = {
    first_token_ms: call.firstTokenMs ?? null,
    tokens_in: call.usage?.prompt_tokens ?? null,
    tokens_out: call.usage?.completion_tokens ?? null,
  };
  if (failure?.kind === 'malformed' || failure?.kind === 'not_a_stream')
    return { ...unreadableAnswer(row, failure.message), ...figures };
  return { ...row, ...figures, ...(failure?.kind === 'status' ? { error_detail: failure.message } : {}) };
}
