import type { PlaybackState, SentenceAt, VoiceSink } from '../session/client';
import type { AgentVoice, Pronunciation, ServerFrame } from '../session/protocol';
import { pronounced } from '#protocol/pronunciations';
import { sentencesOf, SPOKEN_MS_PER_CHAR } from '#protocol/sentences';
import { type Line, replyKey } from '../session/transcript';
import type { Speech } from './speech';

/** A context that does not run this long after it is asked to (no audio device) leaves the voice to the browser. */
const RESUME_WAIT_MS = 2_000;
/** A sentence the browser's voice never says it finished (a known Chrome fault) is let go after its length and this. */
const BROWSER_GRACE_MS = 10_000;

export interface PlayerParts {
  /** The browser's voice: sentences the service does not say, and any it could not. */
  speech: Pick<Speech, 'speak' | 'silence'>;
  /** How the agent speaks now: the conversation's language, its browser voice, its pronunciations. */
  voice(): SpeakingAs;
  /** How far the visitor listened to a sentence. */
  played(at: SentenceAt, state: PlaybackState, offsetMs: number): void;
  /** The conversation as shown: where a sentence the service could not say is read from. */
  lines(): readonly Line[];
  /** A sentence begins, in whose voice: for the page's `speech` event. */
  begins(at: SentenceAt, text: string, voice: 'service' | 'browser'): void;
}

interface SpeakingAs {
  language: string;
  voice: AgentVoice | undefined;
  pronunciations: Pronunciation[] | undefined;
}

/** A sentence in the order it is to be heard: the service's audio, or text for the browser's voice. */
interface Item {
  at: SentenceAt;
  text: string;
  /** As the agent spoke when it came: a reply is read in its turn's language though the visitor switches meanwhile. */
  as: SpeakingAs;
  audio: boolean;
  /** Audio not handed to the worklet yet: it waits for the worklet, or for a browser sentence ahead. */
  held: Float32Array[];
  /** Where its first sample is in what the worklet has played, once handed over. */
  start: number | undefined;
  samples: number;
  /** Its `speech_end` came: no more audio follows. */
  ended: boolean;
  /** The browser's voice has begun it, and the character its last word began at. */
  speaking: boolean;
  lastChar: number;
  spokenLength: number;
}

/** How loud the voice stays while the visitor may be interrupting it. */
const DUCKED = 0.2;

const keyOf = (at: SentenceAt) => (at.turnId ? `t${at.turnId}` : `m${at.messageSeq}`);

/**
 * The agent's voice in the widget (README, The agent's own voice), fetched with the first sentence
 * it says. The service's audio plays through an AudioWorklet whose output goes to an <audio>
 * element, so the browser's echo canceller hears it and the visitor's microphone does not send it
 * back; sentences the service leaves to the browser are said in their place in the same queue.
 * It tells how far each sentence was played: the worklet counts the samples, the browser's voice
 * its word boundaries. A mic press, typing or muting stops it at once, and the rest of what was
 * being said is not played.
 */
export class Player implements VoiceSink {
  #items: Item[] = [];
  /** The sentence whose `speech` came last: its audio follows. */
  #current: Item | undefined;
  /** Replies and messages cut short: what still comes of them is not played. */
  readonly #stopped = new Set<string>();
  #muted = false;
  #context: AudioContext | undefined;
  #node: AudioWorkletNode | undefined;
  /** undefined: not asked for yet; a promise while it starts; false when this browser cannot play it. */
  #ready: Promise<boolean> | boolean | undefined;
  /** Samples handed to the worklet, and played by it. */
  #posted = 0;
  #played = 0;
  /** A stop the worklet has not answered yet: nothing is handed over until it has. */
  #stopping = false;

  constructor(private readonly parts: PlayerParts) {}

  get muted(): boolean {
    return this.#muted;
  }

  set muted(muted: boolean) {
    if (muted) this.stop();
    this.#muted = muted;
  }

  say(at: SentenceAt, text: string): void {
    if (this.#muted || this.#stopped.has(keyOf(at))) return;
    this.#items.push(this.#item(at, text, false));
    this.#pump();
  }

  speech(frame: Extract<ServerFrame, { type: 'speech' | 'speech_end' | 'speech_unavailable' }>): void {
    const at = { turnId: frame.turn_id, messageSeq: frame.message_seq, sentence: frame.sentence };
    if (frame.type === 'speech_unavailable') {
      // The service could not say it: the browser's voice says it in its place, from the text shown.
      const key = frame.turn_id ? replyKey(frame.turn_id) : `s${frame.message_seq}`;
      const line = this.parts.lines().find((l) => l.key === key);
      const text = line && sentencesOf(line.text, true)[frame.sentence];
      return text ? this.say(at, text) : undefined;
    }
    if (frame.type === 'speech_end') {
      if (this.#current) this.#current.ended = true;
      this.#current = undefined;
      return this.#check();
    }
    this.#current = undefined;
    if (this.#muted || this.#stopped.has(keyOf(at))) return;
    // A browser that cannot play the service's audio says its sentences in its own voice.
    this.#current = this.#item(at, frame.text, this.#ready !== false);
    this.#items.push(this.#current);
    this.#rate = frame.sample_rate;
    void this.#start(frame.sample_rate);
  }

  audio(pcm: ArrayBuffer): void {
    const item = this.#current;
    if (!item?.audio) return;
    const floats = toFloats(new Int16Array(pcm, 0, pcm.byteLength >> 1), this.#rate, this.#context?.sampleRate);
    item.held.push(floats);
    item.samples += floats.length;
    this.#pump();
  }

  /** The visitor interrupts: the sentence playing is reported cut where it was, and everything queued is dropped. */
  stop(): void {
    const front = this.#items[0];
    if (front) {
      let offsetMs = 0;
      if (front.speaking)
        offsetMs = (front.lastChar / Math.max(1, front.spokenLength)) * front.text.length * SPOKEN_MS_PER_CHAR;
      else if (front.audio && front.start !== undefined)
        offsetMs = (Math.max(0, this.#played - front.start) / this.#sampleRate) * 1000;
      this.parts.played(front.at, 'interrupted', offsetMs);
    }
    for (const item of this.#items) this.#stopped.add(keyOf(item.at));
    if (this.#current) this.#stopped.add(keyOf(this.#current.at));
    this.#items = [];
    this.#current = undefined;
    this.parts.speech.silence();
    if (this.#node && this.#posted > this.#played) {
      this.#stopping = true;
      this.#node.port.postMessage('stop');
    }
  }

  /** The visitor began speaking over the voice (README, Hands-free voice): it goes quiet at once, and back at `resume`. */
  duck(down: boolean): void {
    const gain = this.#gain;
    if (gain) gain.gain.setTargetAtTime(down ? DUCKED : 1, gain.context.currentTime, 0.02);
  }

  #rate = 24_000;
  #gain: GainNode | undefined;

  get #sampleRate(): number {
    return this.#context?.sampleRate ?? this.#rate;
  }

  #item(at: SentenceAt, text: string, audio: boolean): Item {
    return {
      at,
      text,
      as: this.parts.voice(),
      audio,
      held: [],
      start: undefined,
      samples: 0,
      ended: false,
      speaking: false,
      lastChar: 0,
      spokenLength: 0,
    };
  }

  /** The audio context, its worklet and the <audio> element it plays through, made once; false when this browser cannot run them. */
  #start(rate: number): Promise<boolean> | boolean {
    this.#ready ??= (async () => {
      try {
        const context = new AudioContext({ sampleRate: rate, latencyHint: 'interactive' });
        this.#context = context;
        await context.audioWorklet.addModule(new URL('./playback-worklet.js', import.meta.url));
        const node = new AudioWorkletNode(context, 'concierge-playback', { outputChannelCount: [1] });
        const sink = context.createMediaStreamDestination();
        this.#gain = context.createGain();
        node.connect(this.#gain).connect(sink);
        node.port.onmessage = (event: MessageEvent<number | { stopped: number }>) => this.#heard(event.data);
        // Not kept: a media element that is playing is not collected.
        const output = new Audio();
        output.srcObject = sink.stream;
        this.#node = node;
        const running = await Promise.race([
          Promise.all([context.resume(), output.play()]).then(() => true),
          new Promise<false>((resolve) => setTimeout(resolve, RESUME_WAIT_MS, false)),
        ]);
        if (running) return true;
      } catch {
        // No audio device, or the page forbids playing: the browser's voice says it instead.
      }
      void this.#context?.close();
      this.#context = undefined;
      return false;
    })().then((ready) => {
      this.#ready = ready;
      // Audio that waited becomes text for the browser's voice if it cannot be played.
      if (!ready) for (const item of this.#items) item.audio = false;
      this.#pump();
      return ready;
    });
    return this.#ready;
  }

  /** The worklet's count of samples played: sentences played to their end are reported finished. */
  #heard(played: number | { stopped: number }): void {
    if (typeof played === 'number') this.#played = played;
    else {
      // The stop's answer: what was dropped was never played, and what comes next starts here.
      this.#stopping = false;
      this.#played = this.#posted = played.stopped;
    }
    this.#check();
  }

  #check(): void {
    for (let front = this.#items[0]; front?.audio && front.ended; front = this.#items[0]) {
      if (front.samples && (front.start === undefined || this.#played < front.start + front.samples)) break;
      this.#items.shift();
      if (front.samples) this.parts.played(front.at, 'finished', (front.samples / this.#sampleRate) * 1000);
    }
    this.#pump();
  }

  /** Hands the worklet what it may play now, and starts a browser sentence that has come to the front. */
  #pump(): void {
    for (const [index, item] of this.#items.entries()) {
      if (!item.audio) {
        if (index === 0 && !item.speaking && this.#played >= this.#posted) this.#sayWithBrowser(item);
        return;
      }
      if (this.#ready !== true || this.#stopping) return;
      for (const floats of item.held.splice(0)) {
        if (item.start === undefined) {
          item.start = this.#posted;
          this.parts.begins(item.at, item.text, 'service');
        }
        this.#node!.port.postMessage(floats, [floats.buffer]);
        this.#posted += floats.length;
      }
    }
  }

  #sayWithBrowser(item: Item): void {
    const { language, voice, pronunciations } = item.as;
    const spoken = pronounced(item.text, pronunciations, language);
    item.speaking = true;
    item.spokenLength = spoken.length;
    this.parts.begins(item.at, item.text, 'browser');
    let over = false;
    const done = (said: boolean) => {
      if (over || this.#items[0] !== item) return;
      over = true;
      clearTimeout(watchdog);
      this.#items.shift();
      if (said) this.parts.played(item.at, 'finished', item.text.length * SPOKEN_MS_PER_CHAR);
      this.#pump();
    };
    const watchdog = setTimeout(() => done(false), spoken.length * SPOKEN_MS_PER_CHAR * 2 + BROWSER_GRACE_MS);
    this.parts.speech.speak(spoken, language, voice, {
      boundary: (charIndex) => (item.lastChar = charIndex),
      end: done,
    });
  }
}

/** 16-bit samples as floats at `to` Hz (linear interpolation when the rates differ). */
function toFloats(samples: Int16Array, from: number, to = from): Float32Array {
  const length = Math.floor((samples.length * to) / from);
  const out = new Float32Array(length);
  const step = from / to;
  for (let i = 0; i < length; i++) {
    const at = i * step;
    const left = Math.floor(at);
    const right = Math.min(left + 1, samples.length - 1);
    out[i] = (samples[left]! + (samples[right]! - samples[left]!) * (at - left)) / 32768;
  }
  return out;
}
