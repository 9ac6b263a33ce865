import { can } from '../roles';
import { useEffect, useState } from 'preact/hooks';
import { del, get, list, post, query, text, path } from '../api';
import { startOfDay, when } from '../format';
import { keptInWords, partsInWords, turnTimeline } from '../turn-timeline';
import { ConversationAnalysis } from './conversation-analysis';
import type { Conversation, ConversationDetail, Delivery } from '../types';
import {
  Badge,
  DaysAndExport,
  DeliveryView,
  Empty,
  ErrorNote,
  ListTable,
  Loading,
  saveAs,
  Title,
  useAction,
  useLoad,
} from '../ui';

/** The turns of a conversation as one timeline each, then its transcript deliveries with Redeliver. */
export function Timeline({
  conversation,
  transcript,
  onRedelivered,
}: {
  conversation: ConversationDetail;
  transcript: Delivery[];
  onRedelivered(): void;
}) {
  const redeliver = useAction(async (id: string) => {
    await post<Delivery>(path`/api/v1/deliveries/${id}/redeliver`);
    onRedelivered();
  });
  return (
    <>
      {conversation.turns.length === 0 && <Empty>No turn yet: the visitor has not said anything.</Empty>}
      {conversation.turns.map((turn, n) => (
        <section key={turn.id} class="card turn" aria-label={`Turn ${n + 1}`}>
          <h3>
            Turn {n + 1} <Badge value={turn.status} />
          </h3>
          <ol class="timeline">
            {turnTimeline(turn).map((item, i) => (
              <li key={i} class={`t-${item.kind}${item.ok === false ? ' t-bad' : ''}`}>
                <time dateTime={item.at}>{when(item.at)}</time> <span>{item.title}</span>
                {item.delivery && <DeliveryView d={item.delivery} />}
                {item.parts && (
                  <details class="parts">
                    <summary>Streamed in {partsInWords(item.parts.length)}</summary>
                    <ol>
                      {item.parts.map((p, j) => (
                        <li key={j}>
                          <time dateTime={p.at}>{when(p.at)}</time> {p.title}
                        </li>
                      ))}
                    </ol>
                  </details>
                )}
              </li>
            ))}
          </ol>
        </section>
      ))}
      <section class="card">
        <h3>Transcript deliveries</h3>
        <ErrorNote error={redeliver.error} />
        {transcript.length === 0 && (
          <Empty>No transcript event sent yet (or no transcript hook URL on the deployment).</Empty>
        )}
        <ul class="plain">
          {transcript.map((d) => (
            <li key={d.id}>
              <DeliveryView d={d} />
              {can('editor') && (
                <button type="button" class="small" disabled={redeliver.busy} onClick={() => redeliver.start(d.id)}>
                  Redeliver {d.event_type}
                </button>
              )}
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

/** A conversation and its transcript deliveries, read together. */
export const loadConversation = async (id: string) => {
  const [conversation, transcript] = await Promise.all([
    get<ConversationDetail>(path`/api/v1/conversations/${id}`),
    list<Delivery>(path`/api/v1/deliveries${query({ conversation_id: id, kind: 'transcript', per_page: 100 })}`),
  ]);
  return { conversation, transcript: transcript.data };
};

/** How long after its end a conversation's page looks again for its analysis. */
const ANALYSIS_WAIT_MS = 2 * 60_000;

export function ConversationPage({ id }: { id: string }) {
  const loaded = useLoad(() => loadConversation(id), [id]);
  const remove = useAction(async () => {
    if (!confirm('Erase this conversation, its turns, events and delivery records? This cannot be undone.')) return;
    await del(path`/api/v1/conversations/${id}`);
    location.hash = '#/conversations';
  });
  // A conversation ended a moment ago has its analysis on the way (README, Tests and analysis): looked for again.
  const ended = loaded.data?.conversation;
  const awaited = !!ended?.ended_at && !ended.analysis && Date.now() - Date.parse(ended.ended_at) < ANALYSIS_WAIT_MS;
  useEffect(() => {
    if (!awaited) return;
    const again = setTimeout(loaded.reload, 2_000);
    return () => clearTimeout(again);
  }, [awaited, loaded.data]);
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!loaded.data) return <Loading what="the conversation" />;
  const c = loaded.data.conversation;
  return (
    <section>
      <p>
        <a href="#/conversations">← Conversations</a>
      </p>
      <Title>Conversation with {c.user.name ?? c.user.sub}</Title>
      <p>
        <Badge value={c.status} /> {c.end_reason ? `ended: ${c.end_reason} · ` : ''}started {when(c.created_at)} · agent
        v{c.agent_version} · {c.turn_count} turns
        {c.failed_turn_count ? `, ${c.failed_turn_count} failed` : ''} ·{' '}
        {c.handler === 'person' ? `handled by ${c.handler_name}` : 'handled by the agent'}
        {c.needs_person ? ` · needs a person: ${c.handoff_reason}` : ''}
        {c.status === 'open' && (
          <>
            {' · '}
            <a href={`#/inbox/${c.id}`}>Open in the inbox</a>
          </>
        )}
      </p>
      <div class="actions">
        <button type="button" onClick={loaded.reload}>
          Refresh
        </button>
        {can('editor') && (
          <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.start()}>
            Erase
          </button>
        )}
      </div>
      <ErrorNote error={remove.error} />
      {keptInWords(c.turns) && <p class="muted">{keptInWords(c.turns)}</p>}
      <ConversationAnalysis conversation={c} />
      <Timeline conversation={c} transcript={loaded.data.transcript} onRedelivered={loaded.reload} />
    </section>
  );
}

/** The list's filters that take one of a few values: the query key, its label, and each value with its words. */
const CHOICES = [
  [
    'status',
    'Status',
    [
      ['', 'Any'],
      ['open', 'open'],
      ['ended', 'ended'],
    ],
  ],
  [
    'has_failures',
    'Failures',
    [
      ['', 'Any'],
      ['true', 'With failures'],
      ['false', 'Without failures'],
    ],
  ],
  [
    'handler',
    'Handled by',
    [
      ['', 'Anyone'],
      ['agent', 'The agent'],
      ['person', 'A person'],
    ],
  ],
  [
    'needs_person',
    'Needs a person',
    [
      ['', 'Any'],
      ['true', 'Needs a person'],
      ['false', 'Does not'],
    ],
  ],
] as const;

export function ConversationsPage() {
  const initial = new URLSearchParams(location.hash.split('?')[1]);
  const [filters, setFilters] = useState({
    deployment_id: initial.get('deployment_id') ?? '',
    agent_id: '',
    status: '',
    search: '',
    user_sub: '',
    has_failures: '',
    handler: '',
    needs_person: '',
    created_after: '',
    created_before: '',
    criterion: '',
    field: '',
  });
  const [page, setPage] = useState(1);
  const set = (key: keyof typeof filters) => (e: { currentTarget: { value: string } }) => {
    setFilters({ ...filters, [key]: e.currentTarget.value });
    setPage(1);
  };
  // The date inputs are local days; the API takes instants.
  const params = {
    ...filters,
    created_after: startOfDay(filters.created_after),
    created_before: startOfDay(filters.created_before, 1),
  };
  const conversations = useLoad(
    () => list<Conversation>(path`/api/v1/conversations${query({ ...params, page })}`),
    [JSON.stringify(params), page],
  );
  const exporting = useAction(async () => {
    saveAs(
      'conversations.ndjson',
      await text(path`/api/v1/conversations/export${query(params)}`),
      'application/x-ndjson',
    );
  });
  return (
    <section>
      <Title>Conversations</Title>
      <div class="filters" role="search">
        <label>
          Search what was said
          <input type="search" maxLength={200} value={filters.search} onInput={set('search')} />
        </label>
        {CHOICES.map(([key, label, options]) => (
          <label key={key}>
            {label}
            <select value={filters[key]} onChange={set(key)}>
              {options.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </label>
        ))}
        <label>
          Visitor (sub)
          <input value={filters.user_sub} onInput={set('user_sub')} />
        </label>
        <label>
          Deployment id
          <input value={filters.deployment_id} onInput={set('deployment_id')} />
        </label>
        <label>
          Agent id
          <input value={filters.agent_id} onInput={set('agent_id')} />
        </label>
        <label>
          Criterion result (id:success)
          <input value={filters.criterion} placeholder="booked_table:failure" onInput={set('criterion')} />
        </label>
        <label>
          Field value (name:value)
          <input value={filters.field} placeholder="topic:spa" onInput={set('field')} />
        </label>
        <DaysAndExport
          from={filters.created_after}
          to={filters.created_before}
          onFrom={set('created_after')}
          onTo={set('created_before')}
          exporting={exporting}
        />
      </div>
      <ErrorNote error={exporting.error} />
      <ListTable
        what="Conversations"
        loaded={conversations}
        onPage={setPage}
        empty={
          <>
            No conversation here yet.{' '}
            {can('editor') ? (
              <>
                <a href="#/try">Try a deployment</a> to have the first one.
              </>
            ) : (
              'They appear here as visitors talk to the concierge.'
            )}
          </>
        }
        columns={[
          { label: 'Visitor', cell: (c) => <a href={`#/conversations/${c.id}`}>{c.user.name ?? c.user.sub}</a> },
          {
            label: 'Status',
            cell: (c) => (
              <>
                <Badge value={c.status} />
                {c.failed_turn_count > 0 && <span class="badge badge-failed">{c.failed_turn_count} failed</span>}
                {c.needs_person && <span class="badge badge-failed">needs a person</span>}
                {c.handler === 'person' && <span class="badge badge-active">{c.handler_name} handles it</span>}
              </>
            ),
          },
          { label: 'Turns', cell: (c) => c.turn_count },
          { label: 'Started', cell: (c) => when(c.created_at) },
        ]}
      />
    </section>
  );
}
