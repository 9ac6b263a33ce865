import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { SessionClient } from '../session/client';
import type { Line, View } from '../session/transcript';
import { ListenError, type Speech } from '../speech/speech';
import { isWebUrl, ReplyText } from './reply-text';

export interface AppProps {
  client: SessionClient;
  speech: Speech;
  /** Opened and closed from the public API as well as from the launcher. */
  open: boolean;
  setOpen(open: boolean): void;
  /** A problem outside the session (the microphone), for the page's `error` handlers. */
  onError(code: string, message: string): void;
}

const STATUS: Record<View['status'], string> = {
  connecting: 'Connecting…',
  reconnecting: 'Connection lost. Reconnecting…',
  offline: 'Offline. Your messages will be sent when the connection is back.',
  open: '',
  ended: 'This conversation has ended.',
};

const FAILURE: Record<string, string> = {
  hook_rejected: 'could not be answered',
  hook_failed: 'could not be delivered',
  reply_timeout: 'got no answer in time',
  rate_limited: 'was not sent: too many messages, wait a moment',
  too_many_pending_turns: 'was not sent: wait for the answers first',
  conversation_ended: 'was not answered: the conversation has ended',
};

const BLOCKED_MIC = 'The microphone is blocked. Allow it for this site in your browser, or type your message.';
const MIC_PROBLEM: Record<string, string> = {
  'not-allowed': BLOCKED_MIC,
  'service-not-allowed': BLOCKED_MIC,
  'audio-capture': 'No microphone was found. Type your message instead.',
};

function useView(client: SessionClient): View {
  const [view, setView] = useState(client.view);
  useEffect(() => client.onView(setView), [client]);
  return view;
}

export function App({ client, speech, open, setOpen, onError }: AppProps) {
  const view = useView(client);
  const launcher = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(open);
  useLayoutEffect(() => {
    // Closing hands focus back to the launcher, in the same frame, so keyboard users are never stranded.
    if (wasOpen.current && !open) launcher.current?.focus();
    wasOpen.current = open;
  }, [open]);
  const title = view.theme.title ?? view.agent?.name ?? 'Concierge';
  return (
    <div class={`root${view.theme.position === 'bottom-left' ? ' left' : ''}`} style={view.theme.accent_color ? { '--accent': view.theme.accent_color } : undefined}>
      {open && <Panel client={client} speech={speech} view={view} title={title} onClose={() => setOpen(false)} onError={onError} />}
      <button ref={launcher} class="launcher" type="button" aria-expanded={open} aria-label={open ? `Close ${title}` : `Chat with ${title}`} onClick={() => setOpen(!open)}>
        <svg viewBox="0 0 24 24" aria-hidden="true">
          {open ? <path d="M6.4 5 5 6.4 10.6 12 5 17.6 6.4 19l5.6-5.6 5.6 5.6 1.4-1.4-5.6-5.6L19 6.4 17.6 5 12 10.6z" /> : <path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z" />}
        </svg>
      </button>
    </div>
  );
}

interface PanelProps extends Pick<AppProps, 'client' | 'speech' | 'onError'> {
  view: View;
  title: string;
  onClose(): void;
}

function Panel({ client, speech, view, title, onClose, onError }: PanelProps) {
  const [draft, setDraft] = useState('');
  const [listening, setListening] = useState(false);
  const [interim, setInterim] = useState('');
  const [micProblem, setMicProblem] = useState('');
  const input = useRef<HTMLTextAreaElement>(null);
  const log = useRef<HTMLOListElement>(null);
  useEffect(() => input.current?.focus(), []);
  const newest = view.lines[view.lines.length - 1];
  // A streamed reply grows in place: the log follows its text as well as new lines.
  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [view.lines.length, newest?.text, newest?.actions]);

  const ended = view.status === 'ended';
  const thinking = view.lines.some((l) => l.state === 'thinking' || l.state === 'sent');
  // Quick replies stand until the visitor sends any turn.
  const lastAsked = view.lines.reduce((last, l, i) => (l.who === 'user' ? i : last), -1);
  const language = view.agent?.language ?? undefined;

  const send = (event: Event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text || ended) return;
    speech.silence();
    client.say(text, 'text');
    setDraft('');
  };

  const talk = async () => {
    if (listening) return speech.stopListening();
    speech.silence(); // barge-in: speaking again interrupts the reply being read out
    setListening(true);
    setInterim('');
    setMicProblem('');
    try {
      const words = await speech.listen(language, setInterim);
      if (words) client.say(words, 'voice');
    } catch (err) {
      // Said in the panel (an alert, so screen readers hear it), told to the page, and typing stays ready.
      const reason = err instanceof ListenError ? err.reason : 'unavailable';
      setMicProblem(MIC_PROBLEM[reason] ?? 'Voice input is not working right now. Type your message instead.');
      onError('mic_unavailable', `The microphone cannot be used: ${reason}`);
      input.current?.focus();
    } finally {
      setListening(false);
      setInterim('');
    }
  };

  return (
    <section class="panel" role="dialog" aria-label={title} onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      {/* Not a <header>: inside the host page's body it would be a second banner landmark. */}
      <div class="head">
        <h2>{title}</h2>
        <button type="button" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      {/* Always present, so screen readers announce each change of its text. */}
      <p class="status" role="status">
        {STATUS[view.status]}
      </p>
      <ol class="log" ref={log} aria-live="polite" aria-label="Conversation">
        {view.agent?.greeting && !view.lines.some((l) => l.key === 's1' && l.who === 'agent') && <li class="msg agent">{view.agent.greeting}</li>}
        {view.lines.map((line, i) => (
          <Message key={line.key} line={line} client={client} current={i > lastAsked} onQuickReply={() => speech.silence()} />
        ))}
        {thinking && (
          <li class="thinking">
            <span class="dots">{view.agent?.name ?? 'Concierge'} is thinking</span>
          </li>
        )}
      </ol>
      {micProblem && (
        <p class="problem" role="alert">
          {micProblem}
        </p>
      )}
      {listening && (
        <p class="interim" aria-live="polite">
          {interim || 'Listening…'}
        </p>
      )}
      {ended ? (
        <div class="ended">
          <span>Conversation ended.</span>
          <button type="button" onClick={() => client.restart()}>
            Start a new conversation
          </button>
        </div>
      ) : (
        <form onSubmit={send}>
          <label class="sr" for="concierge-input">
            Your message
          </label>
          <textarea
            id="concierge-input"
            ref={input}
            rows={1}
            value={draft}
            placeholder="Ask a question…"
            onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) send(e);
            }}
          />
          {speech.canListen && (
            <button type="button" class="mic" aria-pressed={listening} aria-label={listening ? 'Stop listening' : 'Speak'} onClick={() => void talk()}>
              <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" fill="currentColor">
                <path d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-3.1A7 7 0 0 0 19 11z" />
              </svg>
            </button>
          )}
          <button type="submit" disabled={!draft.trim()}>
            Send
          </button>
        </form>
      )}
    </section>
  );
}

interface MessageProps {
  line: Line;
  client: SessionClient;
  /** No turn was sent after it: its quick replies still stand. */
  current: boolean;
  onQuickReply(): void;
}

function Message({ line, client, current, onQuickReply }: MessageProps) {
  if (line.note) return <li class="note">{`${line.name} ${line.note === 'joined' ? 'joined' : 'left'} the conversation.`}</li>;
  return (
    <>
      <li class={`msg ${line.who}${line.state === 'sending' ? ' sending' : ''}`}>
        {line.name && <b class="by">{line.name}</b>}
        {line.who === 'agent' ? <ReplyText text={line.text} /> : line.text}
        {line.state === 'sending' && <span class="sr"> (sending)</span>}
      </li>
      {line.actions && line.actions.length > 0 && <Actions line={line} client={client} current={current} onQuickReply={onQuickReply} />}
      {line.state === 'failed' && (
        <li class="note failed">
          <span>This message {FAILURE[line.reason ?? ''] ?? 'failed'}.</span>
          <button type="button" onClick={() => client.retry(line)}>
            Retry
          </button>
        </li>
      )}
    </>
  );
}

/** A reply's links and buttons: links open in a new tab, a quick reply is sent as the visitor's turn, a labelled client action runs once on click. */
function Actions({ line, client, current, onQuickReply }: MessageProps) {
  const shown = line.actions!.map((action, i) => {
    if (action.type === 'link') {
      return isWebUrl(action.url) ? (
        <a key={i} class="action" href={action.url} target="_blank" rel="noopener noreferrer">
          {action.label}
          <span class="sr"> (opens in a new tab)</span>
        </a>
      ) : null;
    }
    if (action.type === 'quick_reply') {
      return current ? (
        <button
          key={i}
          type="button"
          class="action"
          onClick={() => {
            onQuickReply();
            client.say(action.text, 'text');
          }}
        >
          {action.label}
        </button>
      ) : null;
    }
    return action.label ? (
      <button key={i} type="button" class="action" disabled={client.actionRan(line.key, i)} onClick={() => client.runAction(line.key, i)}>
        {action.label}
      </button>
    ) : null;
  });
  if (!shown.some(Boolean)) return null;
  return (
    <li class="actions" role="group" aria-label="Suggested actions">
      {shown}
    </li>
  );
}
