/** The events a transcript hook is sent (README, Transcript events). */
export const transcriptEventTypes = [
  'conversation.started',
  'turn.created',
  'turn.acknowledged',
  'turn.resolved',
  'turn.failed',
  'turn.rated',
  'turn.interrupted',
  'conversation.handoff',
  'message.created',
  'conversation.ended',
  'page.event',
  'conversation.analyzed',
] as const;
export type TranscriptEventType = (typeof transcriptEventTypes)[number];

/** A transcript event before it is addressed: what happened, and its data. */
export interface TranscriptEvent {
  type: TranscriptEventType;
  data: Record<string, unknown>;
}

/** How a transcript event's body is marked: `test` for a sample sent by test-hook. */
export type TranscriptMark = 'real' | 'test';

/** A transcript event as its receiver gets it. */
export function transcriptEventBody(
  event: TranscriptEvent & { id: string; created_at: string; deployment_id: string; conversation_id: string },
  mark: TranscriptMark = 'real',
): string {
  const { id, type, created_at, deployment_id, conversation_id, data } = event;
  return JSON.stringify({
    id,
    type,
    created_at,
    deployment_id,
    conversation_id,
    ...(mark === 'test' ? { test: true } : {}),
    data,
  });
}
