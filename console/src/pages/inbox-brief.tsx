import { useEffect, useState } from 'preact/hooks';
import { get, path } from '../api';
import { when } from '../format';
import type { ConversationBrief } from '../types';
import { ErrorNote, useAction } from '../ui';

/**
 * A brief of the conversation so far (README, A person in the conversation), written by the agent's
 * evaluation model when asked, and at once when this person takes the conversation over.
 */
export function InboxBrief({ id, takenOver }: { id: string; takenOver: boolean }) {
  const [brief, setBrief] = useState<ConversationBrief>();
  const ask = useAction(async () => setBrief(await get<ConversationBrief>(path`/api/v1/conversations/${id}/brief`)));
  useEffect(() => setBrief(undefined), [id]);
  useEffect(() => {
    if (takenOver) void ask.start();
  }, [takenOver, id]);
  return (
    <div class="brief" aria-live="polite">
      {brief?.summary ? (
        <p>
          <strong>Brief:</strong> {brief.summary} <span class="muted">(as of {when(brief.at)})</span>
        </p>
      ) : (
        brief?.note && <p class="muted">{brief.note}</p>
      )}
      <button type="button" class="small" disabled={ask.busy} onClick={() => ask.start()}>
        {ask.busy ? 'Writing a brief…' : brief ? 'Brief me again' : 'Brief me on it'}
      </button>
      <ErrorNote error={ask.error} />
    </div>
  );
}
