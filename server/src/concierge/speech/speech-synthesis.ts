import type { Logger } from 'pino';
import type { SynthesisEngine, SpeechRequest, Synthesiser } from './synthesiser.js';
import { FailureLog } from './failure-log.js';
import { SYNTHESIS_TIMEOUT_MS } from './synthesisers.js';

/** Audio the process keeps of sentences said before; the least recently said goes first. */
const CACHE_BYTES = 64 * 1024 * 1024;
/** A sentence longer than this (about 20 s of audio) is said afresh each time rather than crowd the cache. */
const LARGEST_CACHED_BYTES = 1024 * 1024;
/**
 * Audio of one sentence, at most: 90 s at the synthesiser's rate. What an engine says past it (a
 * sentence at half speed, an engine that does not stop) is not sent; the sentence counts as said.
 */
export const SENTENCE_AUDIO_S = 90;

/**
 * The service's side of synthesis (README, The agent's own voice): at most `concurrency` sentences
 * at the synthesiser at once, each given 10 s from when it is asked for, a wait for a place
 * included (then it is unavailable, and the widget says it in the browser's voice); the same
 * (voice, speed, text) synthesised once per process and kept; every one in flight cut off when
 * its socket closes or the process stops. Audio is never stored.
 */
export class SpeechSynthesis {
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #cache = new Map<string, Buffer>();
  #cachedBytes = 0;
  readonly #stopping = new AbortController();
  readonly #failures: FailureLog;

  constructor(
    private readonly parts: { synthesiser: Synthesiser | undefined; logger: Logger },
    private readonly settings: { concurrency: number; timeoutMs?: number | undefined },
  ) {
    this.#failures = new FailureLog({
      logger: parts.logger,
      message: "speech synthesis failed; sentences are left to the browser's voice",
    });
  }

  /** The engine this process speaks with; undefined when it has none. */
  get engine(): SynthesisEngine | undefined {
    return this.parts.synthesiser?.engine;
  }

  get sampleRate(): number {
    return this.parts.synthesiser?.sampleRate ?? 0;
  }

  /**
   * Says one sentence: its audio handed to `audio` as it comes (one buffer when it was said
   * before). True once all of it was; false when the synthesiser failed, timed out or had no
   * place in time (whatever audio came first was handed over), or when `signal` ended it.
   */
  async say(request: SpeechRequest, audio: (pcm: Buffer) => void, signal: AbortSignal): Promise<boolean> {
    const synthesiser = this.parts.synthesiser;
    if (!synthesiser) return false;
    const key = `${synthesiser.voiceFor(request)}\n${request.speed}\n${request.text}`;
    const kept = this.#cache.get(key);
    if (kept) {
      // Most recently said last: the first to go is the one said longest ago.
      this.#cache.delete(key);
      this.#cache.set(key, kept);
      audio(kept);
      return true;
    }
    const timeoutMs = this.settings.timeoutMs ?? SYNTHESIS_TIMEOUT_MS;
    const deadline = AbortSignal.timeout(timeoutMs);
    const ended = AbortSignal.any([signal, deadline, this.#stopping.signal]);
    if (!(await this.#place(ended))) {
      if (!signal.aborted) this.#failures.report(synthesiser.engine, new Error(`no place within ${timeoutMs} ms`));
      return false;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    const most = SENTENCE_AUDIO_S * synthesiser.sampleRate * 2;
    const full = new AbortController();
    const going = AbortSignal.any([ended, full.signal]);
    try {
      await synthesiser.synthesise(
        request,
        (pcm) => {
          if (going.aborted) return;
          // Whole samples only, up to the sentence's most.
          const kept = bytes + pcm.length > most ? pcm.subarray(0, (most - bytes) & ~1) : pcm;
          if (bytes <= LARGEST_CACHED_BYTES) chunks.push(kept);
          bytes += kept.length;
          if (kept.length) audio(kept);
          if (bytes >= most) full.abort();
        },
        going,
      );
    } catch (err) {
      if (full.signal.aborted && !ended.aborted) return true;
      if (!signal.aborted)
        this.#failures.report(
          synthesiser.engine,
          deadline.aborted ? new Error(`no audio within ${timeoutMs} ms`) : err,
        );
      return false;
    } finally {
      this.#free();
    }
    if (bytes <= LARGEST_CACHED_BYTES) this.#keep(key, Buffer.concat(chunks));
    return true;
  }

  /** The process stops: syntheses in flight, and those waiting for a place, end now. */
  close(): void {
    this.#stopping.abort(new Error('the service is stopping'));
  }

  /** Waits for a place at the synthesiser; false when `signal` ends the wait first. */
  async #place(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return false;
    if (this.#running < this.settings.concurrency) {
      this.#running++;
      return true;
    }
    return new Promise((resolve) => {
      const granted = () => {
        signal.removeEventListener('abort', gaveUp);
        resolve(true);
      };
      const gaveUp = () => {
        this.#waiting.splice(this.#waiting.indexOf(granted), 1);
        resolve(false);
      };
      this.#waiting.push(granted);
      signal.addEventListener('abort', gaveUp, { once: true });
    });
  }

  /** A place is free: the longest waiting takes it, or it is given back. */
  #free(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }

  #keep(key: string, pcm: Buffer): void {
    this.#cache.set(key, pcm);
    this.#cachedBytes += pcm.length;
    for (const [oldest, kept] of this.#cache) {
      if (this.#cachedBytes <= CACHE_BYTES) break;
      this.#cache.delete(oldest);
      this.#cachedBytes -= kept.length;
    }
  }
}
