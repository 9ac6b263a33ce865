import { path, post } from '../api';
import { when } from '../format';
import { can } from '../roles';
import type { AgentTest, ConversationDetail } from '../types';
import { Badge, ErrorNote, useAction } from '../ui';

const RESULT_WORDS = { success: 'met', failure: 'not met', unknown: 'cannot tell' } as const;

/**
 * What the analysis found of a conversation (README, Tests and analysis), and, for an editor, a
 * test made of its visitor's turns.
 */
export function ConversationAnalysis({ conversation }: { conversation: ConversationDetail }) {
  const { analysis } = conversation;
  const made = useAction(async () => {
    const test = await post<AgentTest>(path`/api/v1/agents/${conversation.agent_id}/tests`, {
      from_conversation_id: conversation.id,
    });
    location.hash = `#/agents/${test.agent_id}`;
  });
  return (
    <section class="card analysis" aria-labelledby="analysis-title">
      <h2 id="analysis-title">Analysis</h2>
      {!analysis ? (
        <p class="muted">
          {conversation.status === 'open'
            ? 'Analysed once the conversation ends, or has been quiet 30 minutes, when its agent asks for an analysis.'
            : "Not analysed: its agent's spec asks for no analysis, or it is on its way."}
        </p>
      ) : (
        <>
          {analysis.summary !== null && <p>{analysis.summary}</p>}
          {Object.keys(analysis.criteria).length > 0 && (
            <ul class="plain criteria">
              {Object.entries(analysis.criteria).map(([id, c]) => (
                <li key={id}>
                  <Badge value={c.result} /> <strong>{id}</strong> {RESULT_WORDS[c.result]}: {c.reason}
                </li>
              ))}
            </ul>
          )}
          {Object.keys(analysis.fields).length > 0 && (
            <dl class="fields">
              {Object.entries(analysis.fields).map(([name, value]) => (
                <div key={name}>
                  <dt>{name}</dt>
                  <dd>{value === null ? <span class="muted">not said</span> : String(value)}</dd>
                </div>
              ))}
            </dl>
          )}
          <p class="muted">
            Analysed {when(analysis.at)} (agent v{analysis.agent_version})
          </p>
        </>
      )}
      {can('editor') && conversation.turn_count > 0 && (
        <button type="button" disabled={made.busy} onClick={() => made.start()}>
          Make a test of this conversation
        </button>
      )}
      <ErrorNote error={made.error} />
    </section>
  );
}
