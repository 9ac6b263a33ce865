import { useEffect, useState } from 'preact/hooks';
import { InboxBrief } from './inbox-brief';
import { onActivity } from '../activity';
import { get, list, post, path } from '../api';
import { VISITOR_ASKED } from '#protocol/handoff';
import { type Handoff, inboxOrder, personWait, transcriptOf, waitingTurnsOf, withEvents } from '../inbox';
import { when } from '../format';
import type { Conversation, ConversationDetail, StoredEvent } from '../types';
import { ActionForm, Badge, Empty, ErrorNote, Loading, Title, useAction, useLoad } from '../ui';

/** The name this person last used, so a takeover or a message needs it typed once per browser. */
const NAME_KEY = 'concierge.person-name';

/** What the list shows: open conversations, those waiting for a person, or the ended ones. */
type Shown = 'open' | 'waiting' | 'ended';
const SHOWN: [Shown, string][] = [
  ['open', 'Open'],
  ['waiting', 'Waiting for a person'],
  ['ended', 'Ended'],
];

/**
 * The conversations `shown` names, Try it's left out: open ones are those needing a person (at
 * most 100) and the 100 most recent, once each; ended ones the 50 that ended last.
 */
async function loadShown(shown: Shown): Promise<Conversation[]> {
  if (shown === 'ended')
    return (await list<Conversation>(path`/api/v1/conversations?status=ended&preview=false&per_page=50`)).data;
  const needing = list<Conversation>(
    path`/api/v1/conversations?status=open&needs_person=true&preview=false&per_page=100`,
  );
  const recent =
    shown === 'open'
      ? list<Conversation>(path`/api/v1/conversations?status=open&preview=false&per_page=100`)
      : undefined;
  const [a, b] = await Promise.all([needing, recent]);
  const byId = new Map([...a.data, ...(b?.data ?? [])].map((c) => [c.id, c]));
  return inboxOrder([...byId.values()]);
}

/** The time now, again every 30 s: how long a request has waited changes while nothing else does. */
function useNow(): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), 30_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

const SAID_BY = { visitor: 'Visitor', agent: 'Agent', person: 'Person' } as const;

type Handling = Pick<Handoff, 'handler' | 'name' | 'needs_person' | 'reason'>;
const handlingOf = (c: Conversation): Handling => ({
  handler: c.handler,
  name: c.handler_name,
  needs_person: c.needs_person,
  reason: c.handoff_reason,
});

function ConversationItem({ c, current, now }: { c: Conversation; current: boolean; now: Date }) {
  const wait = personWait(c, now);
  return (
    <li class={wait ? `needs wait-${wait.level}` : undefined}>
      <a href={`#/inbox/${c.id}`} aria-current={current ? 'true' : undefined}>
        <strong>{c.user.name ?? c.user.sub}</strong>
        <span class="muted"> · {when(c.last_activity_at)}</span>
        {c.last_message && (
          <span class="said">
            {SAID_BY[c.last_message.from]}: {c.last_message.text}
          </span>
        )}
        {wait && (
          <span class="badge badge-failed">
            needs a person{wait.minutes > 0 ? `, waiting ${wait.minutes} min` : ''}
          </span>
        )}
        {c.handler === 'person' && <span class="badge badge-active">{c.handler_name} handles it</span>}
        {c.waiting_turns > 0 && (
          <span class="badge">
            {c.waiting_turns} waiting turn{c.waiting_turns > 1 ? 's' : ''}
          </span>
        )}
        {c.needs_person && c.handoff_reason && <span class="muted reason">{c.handoff_reason}</span>}
      </a>
    </li>
  );
}

/** One open conversation, live: its transcript, and a person's controls (take over, answer, write, release). */
function InboxConversation({ id }: { id: string }) {
  const loaded = useLoad(() => get<ConversationDetail>(path`/api/v1/conversations/${id}`), [id]);
  const [events, setEvents] = useState<StoredEvent[]>([]);
  const [handling, setHandling] = useState<Handling>();
  const [name, setName] = useState(() => localStorage.getItem(NAME_KEY) ?? '');
  const [message, setMessage] = useState('');
  const [answers, setAnswers] = useState<Record<string, string>>({});

  useEffect(() => {
    const detail = loaded.data;
    if (!detail) return;
    // Events streamed while the detail was on its way are kept.
    setEvents((live) => withEvents(detail.events, live));
    setHandling(handlingOf(detail));
  }, [loaded.data]);
  useEffect(
    () =>
      onActivity((m) => {
        if (m.kind === 'event' && m.activity.conversation_id === id)
          setEvents((e) => withEvents(e, [m.activity.event]));
        if (m.kind === 'handoff' && m.handoff.conversation_id === id) setHandling(m.handoff);
        if (m.kind === 'resync') loaded.reload();
      }),
    [id],
  );

  const named = () => {
    const trimmed = name.trim();
    if (!trimmed) throw new Error('Type your name first: visitors see it beside your words.');
    localStorage.setItem(NAME_KEY, trimmed);
    return trimmed;
  };
  const [takenOver, setTakenOver] = useState(false);
  const takeOver = useAction(async () => {
    setHandling(handlingOf(await post<Conversation>(path`/api/v1/conversations/${id}/takeover`, { name: named() })));
    setTakenOver(true);
  });
  const release = useAction(async () =>
    setHandling(handlingOf(await post<Conversation>(path`/api/v1/conversations/${id}/release`))),
  );
  const write = useAction(async () => {
    await post<Conversation>(path`/api/v1/conversations/${id}/messages`, { text: message, name: named() });
    setMessage('');
  });
  const [closing, setClosing] = useState(false);
  const close = useAction(async () => {
    await post<Conversation>(path`/api/v1/conversations/${id}/close`);
    setClosing(false);
    loaded.reload();
  });
  const answer = useAction(async (turnId: string) => {
    await post(path`/api/v1/conversations/${id}/turns/${turnId}/reply`, { reply_text: answers[turnId] ?? '' });
    setAnswers((all) => ({ ...all, [turnId]: '' }));
  });

  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!loaded.data || !handling) return <Loading what="the conversation" />;
  const c = loaded.data;
  const ended = c.status === 'ended' || events.some((e) => e.type === 'conversation_ended');
  const byPerson = handling.handler === 'person';
  const waiting = waitingTurnsOf(events);
  const lines = transcriptOf(events);

  return (
    <section class="inbox-conversation" aria-labelledby="inbox-conversation-title">
      <h2 id="inbox-conversation-title">{c.user.name ?? c.user.sub}</h2>
      <p>
        {ended ? (
          <Badge value="ended" />
        ) : byPerson ? (
          `${handling.name} handles this conversation.`
        ) : (
          'The agent handles this conversation.'
        )}{' '}
        <a href={`#/conversations/${id}`}>Its full history</a>
      </p>
      <InboxBrief id={id} takenOver={takenOver} />
      {handling.needs_person && (
        <p class="warn">
          {handling.reason === VISITOR_ASKED
            ? 'The visitor asked for a person.'
            : `The agent handed it over: ${handling.reason}`}
        </p>
      )}
      <div class="lines" role="log" aria-label="Transcript">
        <ol class="plain">
          {lines.length === 0 && <li class="muted">Nothing said yet.</li>}
          {lines.map((l) => (
            <li key={l.seq} class={`line line-${l.who}`}>
              {l.who !== 'notice' && (
                <strong>
                  {l.who === 'visitor'
                    ? `Visitor${l.language ? ` (${l.language})` : ''}`
                    : l.who === 'person'
                      ? l.name
                      : 'Agent'}
                  :{' '}
                </strong>
              )}
              {l.text}
              {l.streaming && <span class="muted"> (writing…)</span>}
            </li>
          ))}
        </ol>
      </div>
      {!ended && (
        <>
          <div class="filters">
            <label>
              Your name, as visitors see it
              <input value={name} maxLength={60} autoComplete="name" onInput={(e) => setName(e.currentTarget.value)} />
            </label>
            {byPerson ? (
              <button type="button" disabled={release.busy} onClick={() => release.start()}>
                Release to the agent
              </button>
            ) : (
              <button type="button" class="primary" disabled={takeOver.busy} onClick={() => takeOver.start()}>
                Take over
              </button>
            )}
          </div>
          <ErrorNote error={takeOver.error ?? release.error} />
          {waiting.map((turn) => (
            <ActionForm key={turn.turn_id} onRun={() => answer.start(turn.turn_id)}>
              <label>
                Answer “{turn.text}”
                <textarea
                  rows={2}
                  maxLength={10000}
                  required
                  disabled={!byPerson}
                  value={answers[turn.turn_id] ?? ''}
                  onInput={(e) => setAnswers({ ...answers, [turn.turn_id]: e.currentTarget.value })}
                />
              </label>
              {byPerson ? (
                <button type="submit" class="primary" disabled={answer.busy}>
                  Send answer
                </button>
              ) : (
                <p class="muted">Take over to answer it yourself; the agent's hook may still answer.</p>
              )}
            </ActionForm>
          ))}
          <ErrorNote error={answer.error} />
          <ActionForm onRun={() => write.start()}>
            <label>
              Write to the visitor
              <textarea
                rows={2}
                maxLength={4000}
                required
                value={message}
                onInput={(e) => setMessage(e.currentTarget.value)}
              />
            </label>
            <button type="submit" disabled={write.busy}>
              Send message
            </button>
          </ActionForm>
          <ErrorNote error={write.error} />
          <div class="filters">
            {closing ? (
              <>
                <span>The visitor is thanked and the conversation ends for good. Close it?</span>
                <button type="button" class="danger" disabled={close.busy} onClick={() => close.start()}>
                  Close it
                </button>
                <button type="button" onClick={() => setClosing(false)}>
                  Keep it open
                </button>
              </>
            ) : (
              <button type="button" onClick={() => setClosing(true)}>
                Close the conversation
              </button>
            )}
          </div>
          <ErrorNote error={close.error} />
        </>
      )}
    </section>
  );
}

/** The inbox (README, The console): open conversations, live, those needing a person first; one of them beside the list. */
export function InboxPage({ id }: { id: string | undefined }) {
  const [shown, setShown] = useState<Shown>('open');
  const open = useLoad(() => loadShown(shown), [shown]);
  const now = useNow();
  useEffect(() => {
    // What happened is streamed; the list is read again at most every 250 ms while it happens, not
    // on a timer. Not a debounce: under steady traffic a debounce would never fire.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = onActivity(() => {
      timer ??= setTimeout(() => {
        timer = undefined;
        open.reload();
      }, 250);
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, []);
  return (
    <section>
      <Title>Inbox</Title>
      <p class="muted">
        Conversations as they happen (Try it's stay out). Those waiting for a person come first, the longest waiting in
        red: take one over to answer its visitor yourself.
      </p>
      <div class="filters" role="group" aria-label="Show">
        {SHOWN.map(([value, label]) => (
          <button key={value} type="button" aria-pressed={shown === value} onClick={() => setShown(value)}>
            {label}
          </button>
        ))}
      </div>
      <ErrorNote error={open.error} />
      <div class="inbox">
        <nav aria-label={`${SHOWN.find(([value]) => value === shown)![1]} conversations`}>
          {!open.data && open.loading && <Loading what="conversations" />}
          {open.data?.length === 0 && (
            <Empty>
              {shown === 'ended'
                ? 'No conversation has ended yet.'
                : shown === 'waiting'
                  ? 'Nobody is waiting for a person.'
                  : 'No open conversation right now. New ones appear here as visitors start them.'}
            </Empty>
          )}
          <ul class="plain">
            {open.data?.map((c) => (
              <ConversationItem key={c.id} c={c} current={c.id === id} now={now} />
            ))}
          </ul>
        </nav>
        {id ? <InboxConversation key={id} id={id} /> : <p class="muted">Choose a conversation to read it live.</p>}
      </div>
    </section>
  );
}
