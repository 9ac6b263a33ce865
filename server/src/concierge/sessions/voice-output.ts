import { type Heard, heardOf, type SaidSentence } from '../conversations/heard.js';
import type { StoredFrame } from '../events/event.repository.js';
import type { SpeechSynthesis } from '../speech/speech-synthesis.js';
import type { SpeechRequest } from '../speech/synthesiser.js';
import type { SessionLine } from './session-line.js';
import type { SessionSocket } from './session-socket.js';
import { MAX_AUDIO_FRAME_BYTES, type ServerFrame, type SynthesisSite, type TurnMode } from '#protocol/frames';
import { sentencesOf, streamedText, unspoken } from '#protocol/sentences';

/** Unsent audio past which the next frame waits for the socket to hand it to the network. */
const AUDIO_WINDOW_BYTES = 256 * 1024;
/** Replies a socket remembers the sentences of, for what was heard of them. */
const REMEMBERED_REPLIES = 20;
/** Sentences synthesised ahead of the one being sent: n+1 is made while n goes out. */
const AHEAD = 1;

/** What the agent's voice on one socket is given. */
export interface VoiceOutputParts {
  line: SessionLine;
  /** Where the audio goes, as binary frames at the pace the socket drains. */
  socket: SessionSocket;
  synthesis: SpeechSynthesis;
  /** Whose voice reads this socket's replies out, under the deployment's settings now. */
  site(): SynthesisSite;
  /** How a sentence in `language` is said: the agent's voice for it, its pace, its pronunciations applied. */
  request(text: string, language: string): SpeechRequest;
  /** The first audio of a reply went out (README, Hands-free voice: what it took is measured from here). */
  firstAudio(turnId: string): void;
}

/** What the agent's voice says on this socket now: a reply's (its turn) or a person's message, and its words so far. */
export interface Playing {
  turnId: string | undefined;
  text: string;
}

/** Audio sent is heard a little later (the network, the widget's buffer): it counts as playing this much longer. */
const PLAYING_SLACK_MS = 300;

/** Where a sentence belongs: a reply's turn, or a person's message (by its seq). */
type Address = { turn_id: string } | { message_seq: number };

/** One sentence on its way: synthesised as soon as it is near the front, sent in order. */
class Sentence {
  readonly chunks: Buffer[] = [];
  done = false;
  ok = false;
  started = false;
  wake: (() => void) | undefined;
  readonly stop = new AbortController();

  constructor(
    readonly address: Address & { sentence: number },
    readonly request: SpeechRequest,
    /** The shown text, and where its audio length is written for what was heard. */
    readonly said: SaidSentence,
  ) {}

  get turnId(): string | undefined {
    return 'turn_id' in this.address ? this.address.turn_id : undefined;
  }
}

/** A reply this socket asked by voice: its sentences as split so far, for speaking and for what was heard. */
interface SpokenReply {
  language: string;
  parts: string[];
  /** Sentences handed out so far, counted as the widget counts them. */
  counted: number;
  sentences: SaidSentence[];
}

/**
 * A socket's outgoing voice (README, The agent's own voice): the replies to the turns this socket
 * asked by voice, and a person's messages once its visitor last spoke, split into sentences as
 * their text arrives; with the service's voice each is synthesised (the next while the current one
 * is sent) and sent as `speech`, PCM, `speech_end`, or `speech_unavailable`. It also keeps each
 * reply's sentences, whoever's voice said them, to tell what a `playback` report means was heard.
 * Nothing is stored; a closed socket cancels its syntheses.
 */
export class VoiceOutput {
  /** The modes of turns this socket sent, by client_turn_id: its own voice turns are the ones it speaks. */
  readonly #asked = new Map<string, TurnMode>();
  readonly #replies = new Map<string, SpokenReply>();
  #lastMode: TurnMode | undefined;
  #language = 'en-US';
  #queue: Sentence[] = [];
  #sending = false;
  /** What was last sent, and until when (by the clock of `performance.now()`) its audio plays at the widget. */
  #playing: (Playing & { untilMs: number }) | undefined;

  constructor(private readonly parts: VoiceOutputParts) {}

  /** The visitor sent a turn (or began speaking one): whatever is still being said is cut short. */
  asked(clientTurnId: string, mode: TurnMode): void {
    this.#asked.set(clientTurnId, mode);
    if (this.#asked.size > REMEMBERED_REPLIES) this.#asked.delete(this.#asked.keys().next().value!);
    this.#lastMode = mode;
    this.quiet();
  }

  /** A stored frame this socket just sent: a voice turn of its own, and its reply's text as it comes. */
  sent({ type, frame, event: written }: StoredFrame): void {
    if (
      type !== 'turn_accepted' &&
      type !== 'reply_part' &&
      type !== 'reply' &&
      type !== 'message' &&
      type !== 'reengaged'
    )
      return;
    if (type !== 'message' && type !== 'reengaged' && !this.#asked.size) return;
    const event = (written ?? JSON.parse(frame)) as Extract<
      ServerFrame,
      { type: 'turn_accepted' | 'reply_part' | 'reply' | 'message' | 'reengaged' }
    >;
    if (event.type === 'turn_accepted') {
      if (event.language) this.#language = event.language;
      if (this.#asked.get(event.client_turn_id) !== 'voice') return;
      this.#replies.set(event.turn_id, {
        language: event.language ?? this.#language,
        parts: [],
        counted: 0,
        sentences: [],
      });
      if (this.#replies.size > REMEMBERED_REPLIES) this.#replies.delete(this.#replies.keys().next().value!);
      return;
    }
    // A quiet hands-free visitor's question is theirs only to hear; a person's message, if they last spoke.
    if (event.type === 'message' || event.type === 'reengaged') {
      if (event.type === 'message' && this.#lastMode !== 'voice') return;
      sentencesOf(event.text, true).forEach((text, i) =>
        this.#say({ message_seq: event.seq, sentence: i }, text, this.#language, { text }),
      );
      return;
    }
    const reply = this.#replies.get(event.turn_id);
    if (!reply) return;
    const final = event.type === 'reply';
    if (!final) reply.parts[event.part] = event.text;
    const next = unspoken(final ? event.text : streamedText(reply.parts), final, reply.counted);
    reply.counted = next.spoken;
    for (const text of next.sentences) {
      const said: SaidSentence = { text };
      reply.sentences.push(said);
      this.#say({ turn_id: event.turn_id, sentence: reply.sentences.length - 1 }, text, reply.language, said);
    }
  }

  /**
   * What a `playback` report says the visitor heard of a reply this socket spoke; undefined for
   * a reply it did not. An interruption also drops what was still to be said of that reply.
   */
  heard(turnId: string, sentence: number, offsetMs: number, state: 'finished' | 'interrupted'): Heard | undefined {
    const reply = this.#replies.get(turnId);
    if (!reply) return undefined;
    if (state === 'interrupted') this.quiet();
    return heardOf(reply.sentences, sentence, offsetMs, state);
  }

  /** What the widget is playing now, going by the audio sent; undefined once it has all been heard. */
  playing(): Playing | undefined {
    const playing = this.#playing;
    if (!playing || performance.now() > playing.untilMs + PLAYING_SLACK_MS) return undefined;
    return { turnId: playing.turnId, text: playing.text };
  }

  /** The visitor spoke over the voice (README, Hands-free voice): nothing more of it is sent. */
  interrupt(): void {
    this.#playing = undefined;
    this.quiet();
  }

  /** The visitor cut the voice short: nothing more of what is queued is synthesised or sent. */
  quiet(): void {
    for (const sentence of this.#queue) sentence.stop.abort();
    this.#queue = this.#queue.slice(0, this.#sending ? 1 : 0);
  }

  /** The socket is gone: every synthesis of it ends. */
  dispose(): void {
    this.quiet();
  }

  #say(address: Address & { sentence: number }, text: string, language: string, said: SaidSentence): void {
    if (this.parts.site() !== 'service') return;
    this.#queue.push(new Sentence(address, this.parts.request(text, language), said));
    void this.#run();
  }

  async #run(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#queue.length && !this.parts.line.isClosed()) {
        for (const ahead of this.#queue.slice(0, AHEAD + 1)) if (!ahead.started) this.#start(ahead);
        const sentence = this.#queue[0]!;
        await this.#send(sentence);
        if (this.#queue[0] === sentence) this.#queue.shift();
      }
    } finally {
      this.#sending = false;
    }
  }

  #start(sentence: Sentence): void {
    sentence.started = true;
    void this.parts.synthesis
      .say(
        sentence.request,
        (pcm) => {
          sentence.chunks.push(pcm);
          sentence.wake?.();
        },
        sentence.stop.signal,
      )
      .then((ok) => {
        sentence.done = true;
        sentence.ok = ok;
        sentence.wake?.();
      });
  }

  /** Sends one sentence's frames as its audio comes; resolves once it is all sent, or cut short. */
  async #send(sentence: Sentence): Promise<void> {
    const { socket, synthesis } = this.parts;
    const cut = () => sentence.stop.signal.aborted || this.parts.line.isClosed();
    await this.#more(sentence);
    if (cut()) return;
    const address = { ...sentence.address };
    if (!sentence.chunks.length) {
      this.parts.line.send({ type: 'speech_unavailable', ...address });
      return;
    }
    this.parts.line.send({ type: 'speech', ...address, text: sentence.said.text, sample_rate: synthesis.sampleRate });
    let carry: Buffer | undefined;
    let bytes = 0;
    for (;;) {
      for (const chunk of sentence.chunks.splice(0)) {
        const pcm: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
        // A sample is two bytes: an odd byte waits for its other half.
        const whole = pcm.length & ~1;
        carry = whole < pcm.length ? pcm.subarray(whole) : undefined;
        for (let at = 0; at < whole && !cut(); at += MAX_AUDIO_FRAME_BYTES) {
          const frame = pcm.subarray(at, Math.min(whole, at + MAX_AUDIO_FRAME_BYTES));
          if (!bytes) this.#began(sentence);
          bytes += frame.length;
          if (this.#playing) this.#playing.untilMs += (frame.length / 2 / synthesis.sampleRate) * 1000;
          // A visitor on a slow line gets the audio at the pace it drains, not all at once.
          if (socket.bufferedAmount > AUDIO_WINDOW_BYTES) await new Promise<void>((r) => socket.send(frame, () => r()));
          else socket.send(frame);
        }
      }
      if (cut() || sentence.done) break;
      await this.#more(sentence);
    }
    if (this.parts.line.isClosed()) return;
    sentence.said.durationMs = Math.round((bytes / 2 / synthesis.sampleRate) * 1000);
    // Cut short, or complete: the widget has all of it. A synthesiser failing midway leaves the rest to the browser's voice.
    this.parts.line.send(
      cut() || sentence.ok ? { type: 'speech_end', ...address } : { type: 'speech_unavailable', ...address },
    );
  }

  /** A sentence's first audio goes out: it is what plays, after what was sent before it. */
  #began(sentence: Sentence): void {
    const { turnId } = sentence;
    const now = performance.now();
    const before = this.#playing;
    const same = before !== undefined && before.turnId === turnId && before.untilMs > now;
    this.#playing = {
      turnId,
      text: same ? `${before.text} ${sentence.said.text}` : sentence.said.text,
      untilMs: same ? before.untilMs : now,
    };
    if (turnId && sentence.address.sentence === 0) this.parts.firstAudio(turnId);
  }

  /** Resolves when the sentence has more audio, is done, or is cut short. */
  #more(sentence: Sentence): Promise<void> {
    if (sentence.chunks.length || sentence.done || sentence.stop.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const go = () => {
        sentence.wake = undefined;
        sentence.stop.signal.removeEventListener('abort', go);
        resolve();
      };
      sentence.wake = go;
      sentence.stop.signal.addEventListener('abort', go, { once: true });
    });
  }
}
