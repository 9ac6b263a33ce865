import { AUDIO_SAMPLE_RATE, type RecognitionEngine } from '#protocol/frames';
import type { TurnTaking } from '../../agents/agent-turn-taking.js';
import { AppError } from '../../errors.js';
import type { SpeechRecognition } from '../speech/speech-recognition.js';
import { endOfTurnSilenceMs } from '../speech/turn-taking.js';
import { VoiceActivity, type VoiceActivityEvent } from '../speech/voice-activity.js';
import { type AgentVoiceNow, BargeIn } from './barge-in.js';
import { IncomingUtterance, refusalOfFrame } from './incoming-utterance.js';
import { FoundTurns } from './found-turns.js';
import { QuietVisitor } from './quiet-visitor.js';
import type { SessionLine } from './session-line.js';
import type { Speaker } from './voice-input.js';

const BYTES_PER_MS = (AUDIO_SAMPLE_RATE * 2) / 1000;
/** Audio waiting for the voice-activity model past this is dropped: a node too busy to keep up loses audio, not memory. */
const MAX_BACKLOG_BYTES = 2_000 * BYTES_PER_MS;

/** What an open mic is given by its socket. */
export interface OpenMicParts {
  line: SessionLine;
  speech: SpeechRecognition;
  /** Who speaks, in what language, now. */
  speaker(): Omit<Speaker, 'site'>;
  voice: AgentVoiceNow;
  turnTaking(): TurnTaking;
  /** Whether a person is in the conversation: the visitor then is never asked if they are still there. */
  personPresent(): boolean;
  /** Asks the quiet visitor, once, if they are still there. */
  reengage(): void;
}

/** The turn being found: its words so far, recognised segment by segment. */
interface FoundTurn {
  words: string[];
  speechMs: number;
  audioMs: number;
  /** Segments at the recogniser. */
  pending: number;
  /** Where in the stream its last speech stopped; undefined while the visitor speaks. */
  stoppedAtMs: number | undefined;
  recognition: { engine: RecognitionEngine; durationMs: number } | undefined;
  /** Audio of it was refused (too long, no room, the recogniser down): it makes no turn. */
  dropped: boolean;
}

/**
 * A hands-free visitor's open mic (README, Hands-free voice): the audio streamed the whole time,
 * speech told from the rest by the voice-activity model, each stretch of speech recognised as it
 * stops, and the turn made once the quiet after it is long enough for its words. Budgets count the
 * speech only; memory is bounded: the model's state and pre-roll, at most 2 s of audio waiting for
 * it, and the speech of the turn being found (at most 30 s a stretch, held in the speech budget).
 */
export class OpenMic {
  readonly #vad = new VoiceActivity();
  readonly #bargeIn: BargeIn;
  readonly #quiet: QuietVisitor;
  #reading: Promise<void> = Promise.resolve();
  #recognising: Promise<void> = Promise.resolve();
  readonly #recognitions = new Set<AbortController>();
  #backlog = 0;
  /** Audio read so far, in ms: the stream's own clock; and where the speech going on began. */
  #audioMs = 0;
  #speechFromMs = 0;
  #segment: IncomingUtterance | undefined;
  #turn: FoundTurn | undefined;
  #count = 0;
  /** The turns it made, until their reply: the socket tells it when each is accepted and answered. */
  readonly turns = new FoundTurns();
  #closing = false;
  #stopped = false;

  constructor(
    /** Its turns are `{base}:{n}`. */
    readonly base: string,
    private readonly language: string | undefined,
    private readonly parts: OpenMicParts,
  ) {
    this.#bargeIn = new BargeIn({
      line: parts.line,
      voice: parts.voice,
      settings: () => parts.turnTaking().interruption,
      language: () => this.#language(),
    });
    this.#quiet = new QuietVisitor({
      settings: () => parts.turnTaking(),
      busy: () =>
        this.#vad.speaking ||
        this.#turn !== undefined ||
        this.turns.awaiting ||
        parts.voice.playing() !== undefined ||
        parts.personPresent(),
      reengage: () => parts.reengage(),
      close: () => this.stop('silence'),
    });
  }

  /** Whether it still listens: after `listening_stopped` its frames are ignored until `audio_end`. */
  get listening(): boolean {
    return !this.#stopped;
  }

  frame(pcm: Buffer): void {
    if (this.#stopped || this.#backlog + pcm.length > MAX_BACKLOG_BYTES) return;
    this.#backlog += pcm.length;
    this.#reading = this.#reading
      .then(() => this.#read(pcm))
      .catch((err) => {
        // The model did not load or run: this mic hears nothing more, and the widget is told so.
        if (this.#stopped) return;
        this.dispose();
        this.parts.line.tell(this.parts.speech.listeningFailed(err));
      });
  }

  /** `audio_end`: what was said so far still makes its turn; nothing more is heard. */
  end(): void {
    this.#quiet.dispose();
    // After the audio already sent is read: speech still going stops here, and its turn is made at once.
    this.#reading = this.#reading.then(() => {
      this.#closing = true;
      this.#speechStopped(this.#audioMs, this.#segment?.audioMs ?? 0);
      this.#stopped = true;
      this.#endOfTurn();
    });
  }

  /** The service closes the mic (`listening_stopped`): the widget is told, and what is being said is dropped. */
  stop(reason: 'silence' | 'ended' | 'budget'): void {
    if (this.#stopped) return;
    this.parts.line.send({ type: 'listening_stopped', reason });
    this.dispose();
  }

  /** The socket is gone: nothing of its audio is kept, its recognitions end. */
  dispose(): void {
    this.#stopped = true;
    this.#quiet.dispose();
    this.#bargeIn.dispose();
    this.#segment?.drop();
    this.#segment = undefined;
    this.#turn = undefined;
    for (const recognition of this.#recognitions) recognition.abort();
  }

  #language(): string {
    return this.language ?? this.parts.speaker().language;
  }

  async #read(pcm: Buffer): Promise<void> {
    this.#backlog -= pcm.length;
    if (this.#stopped) return;
    const events = await this.#vad.push(pcm);
    this.#audioMs += pcm.length / BYTES_PER_MS;
    for (const event of events) this.#on(event);
    this.#endOfTurn();
  }

  #on(event: VoiceActivityEvent): void {
    if (this.#stopped) return;
    if (event.type === 'speech_stopped') return this.#speechStopped(event.atMs, event.speechMs);
    if (event.type === 'speech') {
      if (!this.#segment) return;
      this.#add(event.audio);
      const segment = this.#segment;
      // The speech so far, from where it began: the pre-roll before it does not count.
      this.#bargeIn.speechGoesOn(this.#audioMs - this.#speechFromMs, () =>
        this.#recognise(segment.copy()).then((h) => h.text),
      );
      return;
    }
    const { speech, line } = this.parts;
    if (!this.#turn) {
      const refusal = speech.budget.admit(this.parts.speaker());
      if (refusal) {
        line.tell(refusal);
        return this.stop('budget');
      }
      this.#turn = {
        words: [],
        speechMs: 0,
        audioMs: 0,
        pending: 0,
        stoppedAtMs: undefined,
        recognition: undefined,
        dropped: false,
      };
    }
    this.#turn.stoppedAtMs = undefined;
    this.#speechFromMs = event.atMs;
    this.#quiet.spoke();
    const speaker = this.parts.speaker();
    this.#segment = new IncomingUtterance(this.base, this.language, {
      hold: (bytes) => speech.budget.hold(speaker, bytes),
      release: (bytes) => speech.budget.release(bytes),
    });
    this.#add(event.audio);
    line.send({ type: 'speech_started' });
    this.#bargeIn.speechStarted();
  }

  #add(audio: Buffer): void {
    const refusal = refusalOfFrame(this.#segment!.add(audio));
    if (!refusal) return;
    this.parts.line.tell(refusal);
    this.#turn!.dropped = true;
  }

  #speechStopped(atMs: number, speechMs: number): void {
    const segment = this.#segment;
    const turn = this.#turn;
    this.#segment = undefined;
    if (!segment || !turn) return;
    this.parts.line.send({ type: 'speech_stopped' });
    turn.speechMs += speechMs;
    turn.stoppedAtMs = atMs;
    if (segment.dropped) return this.#bargeIn.settled();
    turn.audioMs += segment.audioMs;
    turn.pending++;
    const pcm = segment.pcm();
    this.#recognising = this.#recognising
      .then(async () => {
        const heard = await this.#recognise(pcm);
        if (this.#bargeIn.heard(heard.text)) {
          turn.words.push(heard.text);
          turn.recognition = { engine: heard.engine, durationMs: heard.durationMs };
          if (this.#turn === turn) this.parts.line.send({ type: 'transcript_partial', text: turn.words.join(' ') });
        }
        this.#bargeIn.settled();
      })
      .catch((err) => {
        turn.dropped = true;
        if (this.parts.line.isClosed()) return;
        if (err instanceof AppError) this.parts.line.tell(err);
        else this.parts.line.failed(err);
      })
      .finally(() => {
        turn.pending--;
        this.#endOfTurn();
      });
  }

  async #recognise(pcm: Buffer) {
    const controller = new AbortController();
    this.#recognitions.add(controller);
    try {
      const { deploymentId } = this.parts.speaker();
      return await this.parts.speech.recognise(
        pcm,
        AUDIO_SAMPLE_RATE,
        this.#language(),
        deploymentId,
        controller.signal,
      );
    } finally {
      this.#recognitions.delete(controller);
    }
  }

  /** The turn ends once its words are all recognised and the quiet after them is long enough for them. */
  #endOfTurn(): void {
    const turn = this.#turn;
    if (!turn || this.#segment || turn.pending || turn.stoppedAtMs === undefined) return;
    const quietMs = this.#audioMs - turn.stoppedAtMs;
    const words = turn.words.join(' ');
    const wait = endOfTurnSilenceMs(words, this.#language(), this.parts.turnTaking().end_of_turn);
    if (!this.#closing && quietMs < wait) return;
    this.#turn = undefined;
    if (turn.dropped || !words) return;
    const clientTurnId = `${this.base}:${++this.#count}`;
    this.turns.made(clientTurnId, performance.now() - quietMs);
    this.parts.line.turn({
      client_turn_id: clientTurnId,
      text: words.slice(0, 4000),
      mode: 'voice',
      ...(this.language ? { language: this.language } : {}),
      recognition: { ...turn.recognition!, audioMs: Math.round(turn.audioMs) },
      handsFree: { speechMs: Math.round(turn.speechMs), endOfTurnMs: Math.round(quietMs) },
    });
  }
}
