import { sentencesOf } from '#protocol/sentences';
import { ask, type ClientAction, clicked, messageToSay, tabsPart } from './asking-tab';
import { Connection, type Socket, type Surroundings } from './connection';
import { forgotten, recall, type Remembered, remember, type SentTurn } from './memory';
import {
  Close,
  CloseReason,
  type ClientFrame,
  type FeedbackRating,
  type ReplyAction,
  type ServerFrame,
  type TurnMode,
} from './protocol';
import type { ProactiveRule } from '#protocol/proactive';
import { applyEvent, emptyView, type Ending, type Line, type View } from './transcript';

export type { ClientAction, Socket, Surroundings };

/** What the page's `error` handlers are told when the service will not open this widget here. */
const REFUSED = {
  [CloseReason.originNotAllowed]: "The deployment's channel_config.allowed_origins does not include this page's origin",
  [CloseReason.unknownDeployment]: 'There is no deployment with this deploymentId',
};

export interface SessionOptions {
  baseUrl: string;
  deploymentId: string;
  getToken(): Promise<string>;
  /** Where the conversation is remembered across reloads (sessionStorage). */
  storage: Storage | undefined;
  openSocket?: (url: string) => Socket;
  surroundings?: Surroundings;
  /** The agent's voice on this page (README, The agent's own voice): what to say, and the service's audio. */
  voice?: VoiceSink;
  /** Whether this browser recognises speech itself: `hello` says so, and `ready.speech` answers where speech is recognised. */
  browserRecognition?: boolean;
  /** The page a turn is asked on (README, Greeting visitors first): its address and title. */
  page?: () => { url: string; title: string };
  /** Each client action to run on this page: at most once per reply, never on replay or in another tab (`turnId`: none for a person's message). */
  act?(action: ClientAction, turnId: string | undefined): void;
}

/** Which sentence: of a reply (its turn), or of a person's message (its seq). */
export interface SentenceAt {
  turnId?: string | undefined;
  messageSeq?: number | undefined;
  sentence: number;
}

/** How far a sentence was played: all of it, or cut short `offsetMs` in. */
export type PlaybackState = 'finished' | 'interrupted';

/** Where the agent's voice goes: the player, fetched with the first sentence it is given. */
export interface VoiceSink {
  /** A sentence for the browser's voice, once, as soon as it is complete: a reply to this tab's voice turn, a person's message, one the service could not say. */
  say(at: SentenceAt, text: string): void;
  /** The service's voice: each sentence's `speech`, its PCM, and its `speech_end`, in order; or its `speech_unavailable`. */
  speech(frame: Extract<ServerFrame, { type: 'speech' | 'speech_end' | 'speech_unavailable' }>): void;
  audio(pcm: ArrayBuffer): void;
}

export type SessionEvent =
  | { type: 'ready'; conversationId: string }
  | { type: 'turn'; clientTurnId: string; text: string; mode: TurnMode }
  /** The service has an utterance of this tab whole and is recognising it. */
  | { type: 'transcribing'; clientTurnId: string }
  /** `speak`: this page asked the question by voice, so this page reads the answer out. */
  | {
      type: 'reply';
      turnId: string;
      text: string;
      actions: ReplyAction[];
      mode: TurnMode | undefined;
      replayed: boolean;
      speak: boolean;
    }
  /** A sentence of the agent's voice begins to be heard: the service's (its audio) or the browser's. */
  | { type: 'speech'; turnId: string | undefined; sentence: number; text: string; voice: 'service' | 'browser' }
  /** How far the visitor listened to a sentence of the agent's voice. */
  | { type: 'playback'; turnId: string | undefined; sentence: number; state: PlaybackState; offsetMs: number }
  /** The open mic (README, Hands-free voice): speech heard, the words so far, the agent's voice to stop or bring back, the mic closed. */
  | { type: 'listening'; frame: ListeningFrame }
  /** `name`: the client action that failed (`action_failed`). */
  | { type: 'error'; code: string; message: string; name?: string }
  | { type: 'ended'; reason: string };

/** The service's frames about a hands-free visitor's open mic; none of them stored. */
export type ListeningFrame = Extract<
  ServerFrame,
  { type: 'speech_started' | 'speech_stopped' | 'transcript_partial' | 'interrupt' | 'resume' | 'listening_stopped' }
>;

const newId = (): string => crypto.randomUUID();

/**
 * The widget's end of the protocol in README, Concierge sessions, and the view it shows: resuming
 * with `conversation_id` + `last_seq` over its {@link Connection}, resending unconfirmed turns under
 * their first `client_turn_id` (the server makes no second turn of them), with what the tab
 * remembers across reloads ({@link Remembered}) and what it reads out and runs (asking-tab.ts).
 */
export class SessionClient {
  view: View = emptyView();
  #lastSeq = 0;
  /** Events up to this seq were stored before this page loaded: history, not news. */
  #historySeq: number | undefined;
  #memory: Remembered;
  readonly #connection: Connection;
  /** Labelled client actions clicked on this page, as `lineKey:index`: each runs once. */
  readonly #actionsRun = new Set<string>();
  readonly #listeners = new Set<(event: SessionEvent) => void>();
  readonly #viewers = new Set<(view: View) => void>();

  readonly #o: SessionOptions;
  /** The deployment's greeting rules, as `ready` gave them (README, Greeting visitors first). */
  rules: ProactiveRule[] = [];
  /** The page's context, sent again on every `ready`; and its events sent before a conversation was there. */
  #context: Record<string, unknown> | undefined;
  /** This browser's recognition failed here and the service's took over: later `hello`s say it recognises nothing. */
  #fellBack = false;
  #pageEvents: ClientFrame[] = [];

  constructor(o: SessionOptions) {
    this.#o = o;
    this.#memory = recall(o.storage, o.deploymentId);
    if (this.#memory.theme) this.view = { ...this.view, theme: this.#memory.theme, styled: true };
    this.#connection = new Connection(o, {
      hello: () => ({
        ...(this.#memory.conversation_id
          ? { conversation_id: this.#memory.conversation_id, last_seq: this.#lastSeq }
          : {}),
        ...(this.#memory.language ? { language: this.#memory.language } : {}),
        ...(o.browserRecognition === undefined ? {} : { browser_recognition: o.browserRecognition && !this.#fellBack }),
      }),
      frame: (frame) => this.#receive(frame),
      audio: (pcm) => this.#o.voice?.audio(pcm),
      status: (status) => this.#setView({ ...this.view, status }),
      closed: (code, reason) => this.#closed(code, reason),
      error: (code, message) => this.#emit({ type: 'error', code, message }),
    });
    // A reload shows the history again: the page starts from nothing, so it asks for every event.
    for (const turn of this.#memory.unconfirmed) this.#addSending(turn);
  }

  onEvent(listener: (event: SessionEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  onView(viewer: (view: View) => void): () => void {
    this.#viewers.add(viewer);
    return () => this.#viewers.delete(viewer);
  }

  /** The visitor clicked a labelled client action of a line (a reply or a person's message): it runs once on this page. */
  runAction(lineKey: string, index: number): void {
    const line = this.view.lines.find((l) => l.key === lineKey);
    const action = clicked(line, index, this.#actionsRun);
    if (!action) return;
    this.#setView({ ...this.view });
    this.#o.act?.(action, line!.turnId);
  }

  /** Whether a labelled client action was run on this page already. */
  actionRan(lineKey: string, index: number): boolean {
    return this.#actionsRun.has(`${lineKey}:${index}`);
  }

  start(): void {
    this.#connection.start();
  }

  stop(): void {
    this.#connection.stop();
  }

  /** The visitor's choice in the language menu, if they made one. */
  get chosenLanguage(): string | undefined {
    return this.#memory.language;
  }

  /** The conversation's language: the visitor's choice, else the agent's (README, The widget in your visitors' languages). */
  get language(): string {
    return this.#memory.language ?? this.view.agent?.language ?? 'en-US';
  }

  /** The visitor chose a language: each turn from now on is sent in it. */
  chooseLanguage(language: string): void {
    this.#memory.language = language;
    this.#remember();
    this.#setView({ ...this.view });
  }

  /** The page's event (`Concierge.trigger`): sent now, or once the conversation is there (at most 20 wait). */
  pageEvent(name: string, data: unknown): void {
    const frame = { type: 'page_event', name, ...(data === undefined ? {} : { data }) } as ClientFrame;
    if (this.#connection.link !== 'open' || !this.#connection.send(frame))
      this.#pageEvents = [...this.#pageEvents, frame].slice(-20);
  }

  /** The page's context (`Concierge.setContext`): kept by the service for the agent from now on. */
  setContext(data: Record<string, unknown>): void {
    this.#context = data;
    if (this.#connection.link === 'open') this.#connection.send({ type: 'context', data } as ClientFrame);
  }

  /** A greeting rule approached the visitor: counted for the rule. */
  approached(rule: string, event: 'shown' | 'opened'): void {
    this.#connection.send({ type: 'proactive', rule_id: rule, event });
  }

  /** Sends a visitor's turn; it shows at once and is resent until the server confirms it. */
  say(text: string, mode: TurnMode): void {
    const turn = {
      client_turn_id: newId(),
      text,
      mode,
      language: this.#memory.language,
      page: this.#o.page?.(),
    };
    ask(this.#memory, turn.client_turn_id, mode);
    this.#memory.unconfirmed.push(turn);
    this.#remember();
    this.#addSending(turn);
    this.#emit({ type: 'turn', clientTurnId: turn.client_turn_id, text, mode });
    this.#sendTurn(turn);
  }

  /**
   * The browser's own recognition cannot work here (README, Voice in every browser): where `ready`
   * offered the service's as a fallback, this widget's speech goes to it from now on (and says so
   * in every later `hello`); false when there is none to fall back to, or the socket is not open.
   */
  fallBackToServiceRecognition(): boolean {
    if (this.view.recognitionFallback !== 'service' || !this.#connection.send({ type: 'recognition_fallback' }))
      return false;
    this.#fellBack = true;
    this.#setView({ ...this.view, recognition: 'service', recognitionFallback: undefined });
    return true;
  }

  /** Sends a frame of the service's speech recognition (README, Voice in every browser); false when the socket is not open. */
  sendSpeech(frame: ClientFrame | ArrayBuffer): boolean {
    return this.#connection.send(frame);
  }

  /** A turn the service will make of this tab's voice: its reply is read out here, as a voice turn's is. */
  expectVoice(clientTurnId: string): void {
    ask(this.#memory, clientTurnId, 'voice');
    this.#remember();
  }

  /** How far the visitor listened to a sentence: the service keeps what was heard of a reply (README, The agent's own voice). */
  played(at: SentenceAt, state: PlaybackState, offsetMs: number): void {
    const offset_ms = Math.max(0, Math.round(offsetMs));
    if (at.turnId)
      this.#connection.send({ type: 'playback', turn_id: at.turnId, sentence: at.sentence, offset_ms, state });
    this.#emit({ type: 'playback', turnId: at.turnId, sentence: at.sentence, state, offsetMs: offset_ms });
  }

  /** A failed turn asked again: a new turn with the same words. */
  retry(line: Line): void {
    this.#setView({ ...this.view, lines: this.view.lines.filter((l) => l !== line) });
    this.say(line.text, line.mode ?? 'text');
  }

  end(): void {
    this.#connection.send({ type: 'end' });
  }

  /** The visitor rates a reply: shown at once, stored when the server's `feedback_recorded` comes back. */
  rate(turnId: string, rating: FeedbackRating, comment?: string): void {
    this.#setView(applyEvent(this.view, { type: 'feedback_recorded', seq: 0, turn_id: turnId, rating }));
    this.#connection.send({ type: 'feedback', turn_id: turnId, rating, ...(comment ? { comment } : {}) });
  }

  /** The visitor leaves their question for the team: shown once the server's `person_requested` comes back. */
  askForPerson(): void {
    this.#connection.send({ type: 'ask_for_person' });
  }

  /** After an ended conversation: forget it and start a new one. */
  restart(): void {
    this.stop();
    this.#memory = forgotten(this.#memory.language, this.#memory.theme);
    this.#remember();
    this.#lastSeq = 0;
    this.#historySeq = undefined;
    this.#connection.link = 'connecting';
    this.#setView(emptyView());
    this.start();
  }

  #receive(frame: ServerFrame): void {
    if (frame.type === 'ready') {
      this.#memory.conversation_id = frame.conversation_id;
      this.#memory.theme = frame.widget ?? {};
      this.#remember();
      this.#historySeq ??= frame.resumed ? frame.last_seq : 0;
      this.#connection.opened();
      this.#setView({
        ...this.view,
        status: this.#connection.shown,
        agent: frame.agent,
        theme: frame.widget ?? {},
        styled: true,
        recognition: frame.speech.recognition,
        recognitionFallback: frame.speech.fallback,
        synthesis: frame.speech.synthesis,
        textOnly: frame.speech.text_only,
        voiceMode: frame.speech.mode,
      });
      this.rules = frame.proactive ?? [];
      if (this.#context) this.setContext(this.#context);
      for (const event of this.#pageEvents.splice(0)) this.#connection.send(event);
      for (const turn of this.#memory.unconfirmed) this.#sendTurn(turn);
      this.#emit({ type: 'ready', conversationId: frame.conversation_id });
      return;
    }
    if (frame.type === 'pong') return;
    if (frame.type === 'transcribing') return this.#emit({ type: 'transcribing', clientTurnId: frame.client_turn_id });
    if (frame.type === 'speech' || frame.type === 'speech_end' || frame.type === 'speech_unavailable')
      return this.#o.voice?.speech(frame);

    if (frame.type === 'error') {
      if (
        frame.code === 'rate_limited' ||
        frame.code === 'too_many_pending_turns' ||
        frame.code === 'conversation_ended'
      )
        this.#refuseNewestTurn(frame.code);
      this.#emit({ type: 'error', code: frame.code, message: frame.message });
      return;
    }
    // What is left without a seq is the open mic's.
    if (!('seq' in frame)) return this.#emit({ type: 'listening', frame });
    if (frame.seq <= this.#lastSeq) return;
    // History replayed after a reload is shown, not spoken again.
    const replayed = frame.seq <= (this.#historySeq ?? 0);
    this.#lastSeq = frame.seq;
    if (frame.type === 'turn_accepted') {
      this.#memory.unconfirmed = this.#memory.unconfirmed.filter((t) => t.client_turn_id !== frame.client_turn_id);
      this.#remember();
    }
    this.#setView(applyEvent(this.view, frame));
    if (frame.type === 'reply_part' || frame.type === 'reply' || frame.type === 'turn_failed') {
      const { question, speak, say, from, run, changed } = tabsPart(this.#memory, this.view, frame);
      if (changed) this.#remember();
      this.#say(say, from, { turnId: frame.turn_id });
      for (const action of run) this.#o.act?.(action, frame.turn_id);
      if (frame.type === 'reply')
        this.#emit({
          type: 'reply',
          turnId: frame.turn_id,
          text: frame.text,
          actions: frame.actions ?? [],
          mode: question?.mode,
          replayed,
          speak,
        });
    }
    if (frame.type === 'message')
      this.#say(messageToSay(this.#memory, frame.text, replayed), 0, { messageSeq: frame.seq });
    if (frame.type === 'reengaged' && !replayed) this.#say(sentencesOf(frame.text, true), 0, { messageSeq: frame.seq });
    if (frame.type === 'conversation_ended') this.#finish(frame.reason);
  }

  #closed(code: number, reason: string): void {
    if (code === Close.ended) return this.#finish('deployment_inactive');
    // This page may not open the deployment's widget, or there is no such deployment: retrying cannot help.
    if (reason === CloseReason.originNotAllowed || reason === CloseReason.unknownDeployment) {
      this.#emit({ type: 'error', code: reason, message: REFUSED[reason] });
      return this.#finish(reason);
    }
    if (code === Close.unknownConversation || code === Close.forbidden) {
      // The remembered conversation is not ours (or gone): start afresh rather than loop.
      this.#memory.conversation_id = undefined;
      this.#lastSeq = 0;
      this.#historySeq = undefined;
      this.#setView({
        ...emptyView(),
        status: this.view.status,
        lines: this.view.lines.filter((l) => l.state === 'sending'),
      });
    }
  }

  #finish(reason: string): void {
    this.#memory = forgotten(this.#memory.language, this.#memory.theme);
    this.#remember();
    this.#connection.link = 'ended';
    this.#setView({ ...this.view, status: 'ended', ended: this.view.ended ?? (reason as Ending) });
    this.#emit({ type: 'ended', reason });
  }

  #refuseNewestTurn(code: string): void {
    const newest = [...this.view.lines].reverse().find((l) => l.state === 'sending');
    if (!newest) return;
    this.#memory.unconfirmed = this.#memory.unconfirmed.filter((t) => t.client_turn_id !== newest.clientTurnId);
    delete this.#memory.asked[newest.clientTurnId ?? ''];
    this.#remember();
    this.#setView({
      ...this.view,
      lines: this.view.lines.map((l) => (l === newest ? { ...l, state: 'failed', reason: code } : l)),
    });
  }

  #sendTurn(turn: SentTurn): void {
    if (this.#connection.link === 'open') this.#connection.send({ type: 'user_turn', ...turn });
  }

  /** A turn shown at once, before the server confirms it. */
  #addSending({ client_turn_id, text, mode }: SentTurn): void {
    this.#setView({
      ...this.view,
      lines: [
        ...this.view.lines,
        { key: client_turn_id, who: 'user', text, mode, clientTurnId: client_turn_id, state: 'sending' },
      ],
    });
  }

  /** Sentences the browser's voice says, where it is this widget's voice (the service's speaks for itself). */
  #say(sentences: string[], from: number, at: Omit<SentenceAt, 'sentence'>): void {
    if (this.view.synthesis !== 'browser') return;
    sentences.forEach((text, i) => this.#o.voice?.say({ ...at, sentence: from + i }, text));
  }

  #setView(view: View): void {
    this.view = view;
    for (const viewer of this.#viewers) viewer(view);
  }

  #emit(event: SessionEvent): void {
    for (const listener of this.#listeners) listener(event);
  }

  #remember(): void {
    remember(this.#o.storage, this.#o.deploymentId, this.#memory);
  }
}
