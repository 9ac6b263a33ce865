import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import en from '../../locales/en.json?catalogue';
import type { SessionClient } from '../session/client';
import type { FeedbackRating } from '../session/protocol';
import type { Ending, Line, View } from '../session/transcript';
import { canCapture, serviceListener } from '../speech/service-listener';
import { ListenError, pageSpeech, type Speech } from '../speech/speech';
import type { MicPhase, MicState, OpenMic } from '../speech/hands-free';
import type { Voice } from '../speech/voice';
import css from './panel.css?inline';
import { isWebUrl, ReplyText } from './reply-text';
import { adopt } from './styles';
import { inLanguage } from '#protocol/in-language';
import { languageName } from './language-name';
import { addEnglish, rightToLeft, t, type WordKey } from './words';

addEnglish(en);

/** What the visitor is told when the widget cannot be used here, by why (the rest: "This conversation has ended."). */
const ENDING_WORDS: Partial<Record<Ending, WordKey>> = {
  origin_not_allowed: 'not_here',
  unknown_deployment: 'unavailable',
  deployment_inactive: 'unavailable',
  closed: 'closed',
};

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

/** What the open mic shows it is doing (README, Hands-free voice). */
const MIC_PHASE_WORDS: Record<MicPhase, WordKey> = {
  listening: 'listening',
  hearing: 'hearing',
  thinking: 'mic_thinking',
  speaking: 'mic_speaking',
};

/** The browser's own recognition failed for want of something here (its maker's service, its own audio path), not the visitor's refusal. */
const brokenHere = (err: unknown): boolean =>
  err instanceof ListenError &&
  ['audio-capture', 'network', 'service-not-allowed', 'language-not-supported', 'unavailable'].includes(err.reason);

/**
 * What to tell the visitor: a recogniser that could not capture audio says "no microphone" only
 * when the browser lists none (Chromium's own recogniser fails so beside a working microphone).
 */
async function micProblemOf(reason: string): Promise<WordKey> {
  if (reason !== 'audio-capture') return MIC_PROBLEM[reason] ?? 'mic_failed';
  const devices = await navigator.mediaDevices?.enumerateDevices().catch(() => []);
  return devices?.some((d) => d.kind === 'audioinput') ? 'mic_failed' : 'mic_missing';
}

export interface PanelProps {
  client: SessionClient;
  speech: Speech | undefined;
  /** The agent's voice: stopped when the visitor speaks or types, muted by them. */
  voice: Voice;
  view: View;
  title: string;
  onClose(): void;
  /** A problem outside the session (the microphone), for the page's `error` handlers. */
  onError(code: string, message: string): void;
  /** The visitor chose a language from the menu. */
  onLanguage(tag: string): void;
}

/** The open widget: the conversation, its input and its menus. Loaded when the visitor first opens it. */
export function Panel({ client, speech: given, voice, view, title, onClose, onError, onLanguage }: PanelProps) {
  const speech = given ?? pageSpeech();
  const [draft, setDraft] = useState('');
  const [listening, setListening] = useState(false);
  const serviceListening = useRef<ReturnType<typeof serviceListener>>(undefined);
  // The hands-free mic (README, Hands-free voice): its state while open, and whether the service closed it for silence.
  const [mic, setMic] = useState<MicState>();
  const openMic = useRef<OpenMic>(undefined);
  const [micOff, setMicOff] = useState(false);
  // Closing the panel releases the microphone.
  useEffect(() => () => openMic.current?.close(), []);
  const [interim, setInterim] = useState('');
  // A word key, not its text: said in the visitor's language when they switch after it.
  const [micProblem, setMicProblem] = useState<WordKey | ''>('');
  const [muted, setMuted] = useState(voice.muted);
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
  // Quick replies stand until the visitor sends any turn.
  const lastAsked = view.lines.reduce((last, l, i) => (l.who === 'user' ? i : last), -1);
  const newestReply = [...view.lines].reverse().find((l) => l.who === 'agent' && l.turnId);
  // The service refuses this widget here: starting again would meet the same refusal.
  const restartable = view.ended !== 'origin_not_allowed' && view.ended !== 'unknown_deployment';
  const thinking = view.lines.some((l) => l.state === 'thinking' || l.state === 'sent');
  const waited = useWaited(thinking);
  const [kept, setKept] = useState(false);
  useEffect(() => setKept(false), [thinking]);
  // Leaving a message is offered to a visitor the agent keeps waiting, until they choose or have asked.
  const offered = !kept && !view.person && !view.lines.slice(lastAsked + 1).some((l) => l.note === 'requested');
  const queued = view.lines.filter((l) => l.state === 'sending').length;
  // The menu always shows the language turns are sent in, listed or not.
  const listed = view.theme.languages ?? [];
  const languages = listed.includes(client.language) ? listed : [client.language, ...listed];
  const greeting = view.agent?.greetings
    ? inLanguage(view.agent.greetings, [client.language, view.agent.language])
    : view.agent?.greeting;

  const send = (event: Event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text || ended) return;
    voice.stop();
    client.say(text, 'text');
    setDraft('');
  };

  // Where `ready` said this widget's speech is recognised: the browser's, or the service's from captured audio.
  const listener = view.recognition === 'service' ? (serviceListening.current ??= serviceListener(client)) : speech;
  const canTalk = view.recognition === 'service' ? canCapture() : view.recognition === 'browser' && speech.canListen;
  // Voice cannot be taken here though the deployment takes it: the microphone stays, and says why when pressed.
  const micExplained = !canTalk && view.recognition !== undefined && !view.textOnly;

  const handsFree = view.voiceMode === 'hands_free' && view.recognition === 'service';
  /** Said in the panel (an alert, so screen readers hear it), told to the page, and typing stays ready. */
  const failed = async (err: unknown) => {
    const reason = err instanceof ListenError ? err.reason : 'unavailable';
    setMicProblem(await micProblemOf(reason));
    onError('mic_unavailable', `The microphone cannot be used: ${reason}`);
    input.current?.focus();
  };

  /** One press opens the mic until the next: the service finds each turn, and the visitor may speak over the agent. */
  const talkHandsFree = async () => {
    if (openMic.current) return openMic.current.close();
    setMicProblem('');
    setMicOff(false);
    setMic({ phase: 'listening', level: 0, partial: '' });
    try {
      const { openMic: open } = await import('../speech/hands-free');
      openMic.current = await open(client, voice, {
        state: setMic,
        problem: (code) => setMicProblem(MIC_PROBLEM[code] ?? 'mic_failed'),
        closed: (reason) => {
          openMic.current = undefined;
          setMic(undefined);
          setMicOff(reason === 'silence');
          if (reason === 'budget') setMicProblem('speech_busy');
        },
      });
    } catch (err) {
      setMic(undefined);
      await failed(err);
    }
  };

  const talk = async () => {
    if (!canTalk) {
      setMicProblem('no_voice');
      return input.current?.focus();
    }
    if (handsFree) return talkHandsFree();
    if (listening) return listener.stopListening();
    voice.stop(); // barge-in: speaking again interrupts the reply being read out
    setListening(true);
    setInterim('');
    setMicProblem('');
    try {
      let words: string;
      try {
        words = await listener.listen(client.language, setInterim);
      } catch (err) {
        // The browser's own recognition cannot work here: the service's hears this press and the next.
        if (!(listener === speech && brokenHere(err) && canCapture() && client.fallBackToServiceRecognition()))
          throw err;
        words = await (serviceListening.current ??= serviceListener(client)).listen(client.language, setInterim);
      }
      if (words) client.say(words, 'voice');
    } catch (err) {
      await failed(err);
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
        {listed.length > 1 && (
          <select
            aria-label={t('language')}
            title={t('language')}
            value={client.language}
            onChange={(e) => onLanguage(e.currentTarget.value)}
          >
            {languages.map((tag) => (
              <option key={tag} value={tag} lang={tag}>
                {languageName(tag, languages)}
              </option>
            ))}
          </select>
        )}
        {view.synthesis && view.synthesis !== 'none' && (
          <button
            type="button"
            class="mute"
            aria-label={t('mute')}
            title={t('mute')}
            aria-pressed={muted}
            onClick={() => {
              voice.muted = !muted;
              setMuted(!muted);
            }}
          >
            <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
              <path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor" />
              {muted ? (
                <path d="M16 9l5 6M21 9l-5 6" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
              ) : (
                <path
                  d="M16 8.5a5 5 0 010 7M18.5 6a8.5 8.5 0 010 12"
                  stroke="currentColor"
                  stroke-width="2"
                  fill="none"
                  stroke-linecap="round"
                />
              )}
            </svg>
          </button>
        )}
        <button type="button" aria-label={t('close')} onClick={onClose}>
          ×
        </button>
      </div>
      {/* Always present, so screen readers announce each change of its text. */}
      <p class={`status${ended && view.ended! in ENDING_WORDS ? ' stopped' : ''}`} role="status">
        {view.status === 'open'
          ? ''
          : ended
            ? t(ENDING_WORDS[view.ended!] ?? 'ended')
            : t(view.status === 'offline' && queued ? 'queued' : view.status, { count: queued })}
      </p>
      <ol class="log" ref={log} aria-live="polite" aria-label={t('log')}>
        {greeting && !view.lines.some((l) => l.key === 's1' && l.who === 'agent') && (
          <li class="msg agent" dir="auto">
            {greeting}
          </li>
        )}
        {view.lines.map((line, i) => (
          <Message
            key={line.key}
            line={line}
            client={client}
            current={i > lastAsked}
            rateable={view.theme.feedback !== false}
            newest={line === newestReply}
            onQuickReply={() => voice.stop()}
          />
        ))}
        {thinking && (
          <li class="thinking">
            <span class="dots">
              {view.person
                ? t('writing', { name: view.person })
                : t('thinking', { name: view.agent?.name ?? 'Concierge' })}
            </span>
            {waited >= WAIT_NOTICE_S && (
              <span class="waiting">
                {/* Hidden from screen readers: a count that changes every second would be read out every second. */}
                <span aria-hidden="true">{t('waited', { count: waited })}</span>
                {offered && (
                  <>
                    <button type="button" class="action" onClick={() => setKept(true)}>
                      {t('keep_waiting')}
                    </button>
                    <button type="button" class="action" onClick={() => client.askForPerson()}>
                      {t('leave_message')}
                    </button>
                  </>
                )}
              </span>
            )}
          </li>
        )}
      </ol>
      {micProblem && (
        <p class="problem" role="alert">
          {t(micProblem)}
        </p>
      )}
      {listening && (
        <p class="interim" aria-live="polite">
          {interim || t('listening')}
        </p>
      )}
      {mic && (
        <p class="open-mic" role="status" data-phase={mic.phase}>
          <span class="meter" aria-hidden="true">
            <span style={{ transform: `scaleX(${mic.level.toFixed(2)})` }} />
          </span>
          <span>{mic.partial || t(MIC_PHASE_WORDS[mic.phase])}</span>
        </p>
      )}
      {micOff && !mic && <p class="interim">{t('mic_off')}</p>}
      {ended ? (
        restartable && (
          <div class="ended">
            <button type="button" onClick={() => client.restart()}>
              {t('new')}
            </button>
          </div>
        )
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
            onInput={(e) => {
              // Typing interrupts the agent's voice, as speaking does.
              if (!draft) voice.stop();
              setDraft((e.target as HTMLTextAreaElement).value);
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) send(e);
            }}
          />
          {(canTalk || micExplained) && (
            <button
              type="button"
              class={canTalk ? 'mic' : 'mic unavailable'}
              aria-pressed={listening || mic !== undefined}
              aria-label={t(listening || mic ? 'stop' : 'speak')}
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

/** After this many seconds without an answer, the visitor is told how long they have waited, and offered a way out. */
const WAIT_NOTICE_S = 8;

/** Whole seconds since the visitor began waiting for an answer, counted while they are; 0 otherwise. */
function useWaited(waiting: boolean): number {
  const [since, setSince] = useState(0);
  const [now, setNow] = useState(0);
  useEffect(() => {
    if (!waiting) return;
    const start = Date.now();
    setSince(start);
    setNow(start);
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => {
      clearInterval(timer);
      setSince(0);
    };
  }, [waiting]);
  return since ? Math.floor((now - since) / 1000) : 0;
}

interface MessageProps {
  line: Line;
  client: SessionClient;
  /** No turn was sent after it: its quick replies still stand. */
  current: boolean;
  /** The deployment takes feedback: a reply may be rated. */
  rateable?: boolean;
  /** The newest reply: its rating stays in view, the others' show on hover or focus. */
  newest?: boolean;
  onQuickReply(): void;
}

function Message({ line, client, current, rateable, newest, onQuickReply }: MessageProps) {
  const [comment, setComment] = useState<'asked' | 'sent'>();
  const failure = `failed_${line.reason}`;
  // A note's own text is the customer's words (`still_waiting`); else the widget's, in the visitor's language.
  if (line.note) return <li class="note">{line.text || t(line.note, { name: line.name! })}</li>;
  const rating = rateable && line.turnId && line.who === 'agent' && !line.parts && !line.handoff;
  return (
    <>
      <li class={`msg ${line.who}${line.state === 'sending' ? ' sending' : ''}`}>
        {line.name && <b class="by">{line.name}</b>}
        {/* Each message keeps its own direction, whatever the panel's: English stays left to right in Arabic. */}
        <div dir="auto">{line.who === 'agent' ? <ReplyText text={line.text} /> : line.text}</div>
        {line.state === 'sending' && <span class="sr"> {t('sending')}</span>}
        {rating && (
          <Rating
            line={line}
            client={client}
            shown={newest || Boolean(line.rating)}
            onVote={() => setComment((was) => was ?? 'asked')}
          />
        )}
      </li>
      {rating && comment && line.rating && (
        <Comment line={line} client={client} sent={comment === 'sent'} onSent={() => setComment('sent')} />
      )}
      {line.actions && line.actions.length > 0 && (
        <Actions line={line} client={client} current={current} onQuickReply={onQuickReply} />
      )}
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

/** A thumb, drawn here: an emoji would be an empty box on a system without an emoji font. */
const Thumb = ({ down }: { down?: boolean }) => (
  <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" fill="currentColor">
    <path
      transform={down ? 'rotate(180 12 12)' : undefined}
      d="M2 10h4v11H2zm6 11h9.3a2 2 0 0 0 2-1.6l1.6-7A2 2 0 0 0 19 10h-5.5l.9-4.3A1.6 1.6 0 0 0 12.8 4L8 9.2z"
    />
  </svg>
);

/**
 * Helpful / not helpful on a reply (README, Knowing how it goes): two toggle buttons; choosing the
 * other changes the vote. Always in view on the newest reply and on a rated one, on hover or
 * keyboard focus on the others.
 */
function Rating({
  line,
  client,
  shown,
  onVote,
}: Pick<MessageProps, 'line' | 'client'> & { shown: boolean; onVote(): void }) {
  const vote = (rating: FeedbackRating) => {
    client.rate(line.turnId!, rating);
    onVote();
  };
  return (
    <div class={`rate${shown ? ' shown' : ''}`} role="group" aria-label={t('rate')}>
      <button type="button" aria-pressed={line.rating === 'up'} aria-label={t('helpful')} onClick={() => vote('up')}>
        <Thumb />
      </button>
      <button
        type="button"
        aria-pressed={line.rating === 'down'}
        aria-label={t('not_helpful')}
        onClick={() => vote('down')}
      >
        <Thumb down />
      </button>
    </div>
  );
}

/** Once the visitor votes on a reply, they may say more in a line of text. */
function Comment({
  line,
  client,
  sent,
  onSent,
}: Pick<MessageProps, 'line' | 'client'> & { sent: boolean; onSent(): void }) {
  const [text, setText] = useState('');
  const send = (event: Event) => {
    event.preventDefault();
    if (!text.trim()) return;
    client.rate(line.turnId!, line.rating!, text.trim());
    onSent();
  };
  return (
    <li class="comment">
      {sent ? (
        <span role="status">{t('thanks')}</span>
      ) : (
        <form onSubmit={send}>
          <input
            aria-label={t('comment')}
            placeholder={t('comment')}
            maxLength={500}
            value={text}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
          <button type="submit">{t('send')}</button>
        </form>
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
