import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import en from '../../locales/en.json?catalogue';
import type { SessionClient } from '../session/client';
import type { FeedbackRating } from '../session/protocol';
import type { Line, View } from '../session/transcript';
import { canCapture, serviceListener } from '../speech/service-listener';
import { ListenError, type Speech } from '../speech/speech';
import css from './panel.css?inline';
import { isWebUrl, ReplyText } from './reply-text';
import { adopt } from './styles';
import { addEnglish, languageName, rightToLeft, t, type WordKey } from './words';

addEnglish(en);

/** Why the microphone cannot be used, by the recognition error's name. */
const MIC_PROBLEM: Record<string, WordKey> = {
  'not-allowed': 'mic_blocked',
  'service-not-allowed': 'mic_blocked',
  'audio-capture': 'mic_missing',
  // The service's recogniser (README, Voice in every browser).
  speech_unrecognized: 'speech_unrecognized',
  speech_unavailable: 'mic_failed',
  speech_busy: 'speech_busy',
  speech_too_long: 'speech_too_long',
};

export interface PanelProps {
  client: SessionClient;
  speech: Speech;
  view: View;
  title: string;
  onClose(): void;
  /** A problem outside the session (the microphone), for the page's `error` handlers. */
  onError(code: string, message: string): void;
  /** The visitor chose a language from the menu. */
  onLanguage(tag: string): void;
}

/** The open widget: the conversation, its input and its menus. Loaded when the visitor first opens it. */
export function Panel({ client, speech, view, title, onClose, onError, onLanguage }: PanelProps) {
  const [draft, setDraft] = useState('');
  const [listening, setListening] = useState(false);
  const serviceListening = useRef<ReturnType<typeof serviceListener>>(undefined);
  const [interim, setInterim] = useState('');
  const [micProblem, setMicProblem] = useState('');
  const input = useRef<HTMLTextAreaElement>(null);
  const log = useRef<HTMLOListElement>(null);
  // Its styles join the widget's shadow root before the panel is first painted.
  useLayoutEffect(() => adopt(log.current!.getRootNode() as ShadowRoot, css), []);
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
  const queued = view.lines.filter((l) => l.state === 'sending').length;
  const languages = view.theme.languages ?? [];

  const send = (event: Event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text || ended) return;
    speech.silence();
    client.say(text, 'text');
    setDraft('');
  };

  // Where `ready` said this widget's speech is recognised: the browser's, or the service's from captured audio.
  const listener = view.recognition === 'service' ? (serviceListening.current ??= serviceListener(client)) : speech;
  const canTalk = view.recognition === 'service' ? canCapture() : view.recognition === 'browser' && speech.canListen;

  const talk = async () => {
    if (listening) return listener.stopListening();
    speech.silence(); // barge-in: speaking again interrupts the reply being read out
    setListening(true);
    setInterim('');
    setMicProblem('');
    try {
      const words = await listener.listen(client.language, setInterim);
      if (words) client.say(words, 'voice');
    } catch (err) {
      // Said in the panel (an alert, so screen readers hear it), told to the page, and typing stays ready.
      const reason = err instanceof ListenError ? err.reason : 'unavailable';
      setMicProblem(t(MIC_PROBLEM[reason] ?? 'mic_failed'));
      onError('mic_unavailable', `The microphone cannot be used: ${reason}`);
      input.current?.focus();
    } finally {
      setListening(false);
      setInterim('');
    }
  };

  return (
    <section
      class="panel"
      role="dialog"
      aria-label={title}
      dir={rightToLeft() ? 'rtl' : 'ltr'}
      onKeyDown={(e) => e.key === 'Escape' && onClose()}
    >
      {/* Not a <header>: inside the host page's body it would be a second banner landmark. */}
      <div class="head">
        <h2>{title}</h2>
        {languages.length > 1 && (
          <select
            aria-label={t('language')}
            value={client.language}
            onChange={(e) => onLanguage(e.currentTarget.value)}
          >
            {languages.map((tag) => (
              <option key={tag} value={tag} lang={tag}>
                {languageName(tag)}
              </option>
            ))}
          </select>
        )}
        <button type="button" aria-label={t('close')} onClick={onClose}>
          ×
        </button>
      </div>
      {/* Always present, so screen readers announce each change of its text. */}
      <p class="status" role="status">
        {view.status === 'open'
          ? ''
          : t(view.status === 'offline' && queued ? 'queued' : view.status, { count: queued })}
      </p>
      <ol class="log" ref={log} aria-live="polite" aria-label={t('log')}>
        {view.agent?.greeting && !view.lines.some((l) => l.key === 's1' && l.who === 'agent') && (
          <li class="msg agent">{view.agent.greeting}</li>
        )}
        {view.lines.map((line, i) => (
          <Message
            key={line.key}
            line={line}
            client={client}
            current={i > lastAsked}
            rateable={view.theme.feedback !== false}
            onQuickReply={() => speech.silence()}
          />
        ))}
        {thinking && (
          <li class="thinking">
            <span class="dots">{t('thinking', { name: view.agent?.name ?? 'Concierge' })}</span>
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
          {interim || t('listening')}
        </p>
      )}
      {ended ? (
        <div class="ended">
          <span>{t('finished')}</span>
          <button type="button" onClick={() => client.restart()}>
            {t('new')}
          </button>
        </div>
      ) : (
        <form onSubmit={send}>
          <label class="sr" for="concierge-input">
            {t('message')}
          </label>
          <textarea
            id="concierge-input"
            ref={input}
            rows={1}
            value={draft}
            placeholder={t('placeholder')}
            onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) send(e);
            }}
          />
          {canTalk && (
            <button
              type="button"
              class="mic"
              aria-pressed={listening}
              aria-label={t(listening ? 'stop' : 'speak')}
              onClick={() => void talk()}
            >
              <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" fill="currentColor">
                <path d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-3.1A7 7 0 0 0 19 11z" />
              </svg>
            </button>
          )}
          <button type="submit" disabled={!draft.trim()}>
            {t('send')}
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
  /** The deployment takes feedback: a reply may be rated. */
  rateable?: boolean;
  onQuickReply(): void;
}

function Message({ line, client, current, rateable, onQuickReply }: MessageProps) {
  const failure = `failed_${line.reason}`;
  if (line.note) return <li class="note">{t(line.note, { name: line.name! })}</li>;
  return (
    <>
      <li class={`msg ${line.who}${line.state === 'sending' ? ' sending' : ''}`}>
        {line.name && <b class="by">{line.name}</b>}
        {line.who === 'agent' ? <ReplyText text={line.text} /> : line.text}
        {line.state === 'sending' && <span class="sr"> {t('sending')}</span>}
      </li>
      {line.actions && line.actions.length > 0 && (
        <Actions line={line} client={client} current={current} onQuickReply={onQuickReply} />
      )}
      {rateable && line.turnId && line.who === 'agent' && !line.parts && <Rating line={line} client={client} />}
      {line.state === 'failed' && (
        <li class="note failed">
          <span>{t(failure in en ? (failure as WordKey) : 'failed')}</span>
          <button type="button" onClick={() => client.retry(line)}>
            {t('retry')}
          </button>
        </li>
      )}
    </>
  );
}

/**
 * 👍/👎 on a reply (README, Knowing how it goes): two toggle buttons; choosing the other changes
 * the vote. Once the visitor votes here, they may say more in a line of text.
 */
function Rating({ line, client }: Pick<MessageProps, 'line' | 'client'>) {
  const [voted, setVoted] = useState(false);
  const [comment, setComment] = useState('');
  const [thanked, setThanked] = useState(false);
  const vote = (rating: FeedbackRating) => {
    client.rate(line.turnId!, rating);
    setVoted(true);
  };
  const send = (event: Event) => {
    event.preventDefault();
    if (!comment.trim()) return;
    client.rate(line.turnId!, line.rating!, comment.trim());
    setThanked(true);
  };
  return (
    <li class="rate">
      <div role="group" aria-label={t('rate')}>
        <button type="button" aria-pressed={line.rating === 'up'} aria-label={t('helpful')} onClick={() => vote('up')}>
          👍
        </button>
        <button
          type="button"
          aria-pressed={line.rating === 'down'}
          aria-label={t('not_helpful')}
          onClick={() => vote('down')}
        >
          👎
        </button>
      </div>
      {thanked ? (
        <span role="status">{t('thanks')}</span>
      ) : (
        voted &&
        line.rating && (
          <form onSubmit={send}>
            <input
              aria-label={t('comment')}
              placeholder={t('comment')}
              maxLength={500}
              value={comment}
              onInput={(e) => setComment((e.target as HTMLInputElement).value)}
            />
            <button type="submit">{t('send')}</button>
          </form>
        )
      )}
    </li>
  );
}

/** A reply's links and buttons: links open in a new tab, a quick reply is sent as the visitor's turn, a labelled client action runs once on click. */
function Actions({ line, client, current, onQuickReply }: MessageProps) {
  const shown = line.actions!.map((action, i) => {
    if (action.type === 'link') {
      return isWebUrl(action.url) ? (
        <a key={i} class="action" href={action.url} target="_blank" rel="noopener noreferrer">
          {action.label}
          <span class="sr"> {t('new_tab')}</span>
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
      <button
        key={i}
        type="button"
        class="action"
        disabled={client.actionRan(line.key, i)}
        onClick={() => client.runAction(line.key, i)}
      >
        {action.label}
      </button>
    ) : null;
  });
  if (!shown.some(Boolean)) return null;
  return (
    <li class="actions" role="group" aria-label={t('suggested')}>
      {shown}
    </li>
  );
}
