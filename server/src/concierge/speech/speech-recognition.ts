import type { Logger } from 'pino';
import { AppError } from '../../errors.js';
import type { RecognitionEngine, Recogniser } from './recogniser.js';
import { RECOGNITION_TIMEOUT_MS } from './recognisers.js';
import { FailureLog } from './failure-log.js';
import { SpeechBudget, type SpeechLimits } from './speech-budget.js';

export interface Recognised {
  text: string;
  engine: RecognitionEngine;
  /** From the utterance's end to the recogniser's answer. */
  durationMs: number;
}

/**
 * The service's side of recognition (README, Voice in every browser): at most `concurrency`
 * utterances at the recogniser at once, and at most half of them (rounded up) for one deployment,
 * so one customer's visitors cannot take every place (then `speech_busy`); each given 15 s (then
 * `speech_unavailable`), and every one in flight cut off when the process stops. Its
 * {@link SpeechBudget} says how much speech may begin.
 */
export class SpeechRecognition {
  #running = 0;
  readonly #runningBy = new Map<string, number>();
  readonly #failures: FailureLog;
  readonly #listeningFailures: FailureLog;
  readonly #inFlight = new Set<AbortController>();
  readonly budget: SpeechBudget;
  readonly #perDeployment: number;

  constructor(
    private readonly parts: { recogniser: Recogniser | undefined; logger: Logger },
    private readonly settings: { concurrency: number; timeoutMs?: number | undefined; limits: SpeechLimits },
  ) {
    this.budget = new SpeechBudget(settings.limits);
    this.#failures = new FailureLog({
      logger: parts.logger,
      message: 'speech recognition failed; utterances are answered speech_unavailable',
    });
    this.#listeningFailures = new FailureLog({
      logger: parts.logger,
      message: 'the voice activity model failed; open mics are closed with speech_unavailable',
    });
    this.#perDeployment = Math.ceil(settings.concurrency / 2);
  }

  /** The voice activity model could not read an open mic's audio (README, Hands-free voice): logged once a minute, and what the widget is told. */
  listeningFailed(err: unknown): AppError {
    this.#listeningFailures.report('silero-vad', err);
    return new AppError('speech_unavailable', 'Listening hands-free is not available right now; please type instead');
  }

  /** Whether this process recognises speech at all. */
  get available(): boolean {
    return this.parts.recogniser !== undefined;
  }

  /** What was said in `pcm`, in `language` (BCP 47), for a visitor of `deploymentId`; throws the `speech_*` error the widget is told. */
  async recognise(
    pcm: Buffer,
    sampleRate: number,
    language: string,
    deploymentId: string,
    signal: AbortSignal,
  ): Promise<Recognised> {
    const { recogniser } = this.parts;
    if (!recogniser) throw new AppError('speech_unavailable', 'This service recognises no speech');
    const iso = language.split('-')[0]!.toLowerCase();
    if (recogniser.languages && !recogniser.languages.includes(iso))
      throw new AppError('speech_unavailable', `Speech in ${language} cannot be recognised here; please type instead`);
    const mine = this.#runningBy.get(deploymentId) ?? 0;
    if (this.#running >= this.settings.concurrency || mine >= this.#perDeployment)
      throw new AppError('speech_busy', 'Too many visitors are speaking right now; try again in a moment, or type');
    const started = performance.now();
    const controller = new AbortController();
    const timeoutMs = this.settings.timeoutMs ?? RECOGNITION_TIMEOUT_MS;
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const cancel = () => controller.abort(new Error('the socket closed'));
    signal.addEventListener('abort', cancel, { once: true });
    this.#running++;
    this.#runningBy.set(deploymentId, mine + 1);
    this.#inFlight.add(controller);
    try {
      const text = await recogniser.recognise({ pcm, sampleRate, language: iso }, controller.signal);
      return { text, engine: recogniser.engine, durationMs: Math.round(performance.now() - started) };
    } catch (err) {
      if (!signal.aborted)
        this.#failures.report(recogniser.engine, controller.signal.aborted ? controller.signal.reason : err);
      throw new AppError('speech_unavailable', 'Speech recognition is not available right now; please type instead');
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', cancel);
      this.#running--;
      const left = (this.#runningBy.get(deploymentId) ?? 1) - 1;
      if (left) this.#runningBy.set(deploymentId, left);
      else this.#runningBy.delete(deploymentId);
      this.#inFlight.delete(controller);
    }
  }

  /** The process stops: recognitions in flight end now. */
  close(): void {
    for (const controller of this.#inFlight) controller.abort(new Error('the service is stopping'));
  }
}
