import { AUDIO_SAMPLE_RATE, type ClientMessage, type RecognitionSite } from '#protocol/frames';
import { AppError } from '../../errors.js';
import type { SpeechRecognition } from '../speech/speech-recognition.js';
import { IncomingUtterance, refusalOfFrame } from './incoming-utterance.js';
import type { SessionLine } from './session-line.js';

/** Who speaks on a socket now, under the deployment's settings as they are now. */
export interface Speaker {
  deploymentId: string;
  conversationId: string;
  sub: string;
  /** The conversation's language, for an utterance that names none. */
  language: string;
  /** Where this widget's speech is recognised. */
  site: RecognitionSite;
}

type AudioStart = Extract<ClientMessage, { type: 'audio_start' }>;

/**
 * A socket's voice coming in (README, Voice in every browser): `audio_start`, binary PCM frames,
 * `audio_end` or `audio_cancel`, then the service's recognition, one utterance at a time. Refused
 * utterances keep their place so their frames are ignored; a closed socket keeps none of its audio.
 */
export class VoiceInput {
  /** The utterance arriving now, if any: one at a time per socket. */
  private utterance: IncomingUtterance | undefined;
  /** Drops an utterance that stops receiving audio. */
  private idle: NodeJS.Timeout | undefined;
  /** Utterances at the recogniser: cut off when the socket goes. */
  private readonly recognitions = new Set<AbortController>();

  constructor(
    private readonly line: SessionLine,
    /** Who speaks on the socket now. */
    private readonly speaker: () => Speaker,
    private readonly speech: SpeechRecognition,
  ) {}

  /** Whether an utterance is arriving. */
  get busy(): boolean {
    return this.utterance !== undefined;
  }

  /** An utterance begins; one recognition at a time per socket, and the speech budgets, are checked here. */
  start(message: AudioStart & { client_turn_id: string }): void {
    if (this.utterance)
      return this.line.tell(
        new AppError(
          'invalid_message',
          `Utterance ${this.utterance.clientTurnId} is still in progress: end or cancel it first`,
        ),
      );
    const { speech } = this;
    const { site, ...speaker } = this.speaker();
    const refusal =
      site !== 'service'
        ? new AppError(
            'speech_unavailable',
            'Speech is not recognised by the service for this widget; please type instead',
          )
        : this.recognitions.size
          ? new AppError('speech_busy', 'Your last words are still being recognised; speak again once they are')
          : speech.budget.admit(speaker);
    const budget = {
      hold: (bytes: number) => speech.budget.hold(speaker, bytes),
      release: (bytes: number) => speech.budget.release(bytes),
    };
    this.utterance = new IncomingUtterance(message.client_turn_id, message.language, budget, Boolean(refusal));
    if (refusal) return this.line.tell(refusal);
    this.idle = setTimeout(() => this.idleUtterance(), speech.budget.limits.utteranceIdleMs);
  }

  frame(frame: Buffer): void {
    if (!this.utterance)
      return this.line.end(new AppError('protocol_error', 'Binary frames belong between audio_start and audio_end'));
    this.idle?.refresh();
    const refusal = refusalOfFrame(this.utterance.add(frame));
    if (refusal) this.line.tell(refusal);
  }

  end(clientTurnId: string): void {
    if (this.utterance?.clientTurnId !== clientTurnId)
      return this.line.tell(new AppError('invalid_message', `No utterance ${clientTurnId} is in progress`));
    const utterance = this.finish()!;
    if (utterance.dropped) return;
    this.line.send({ type: 'transcribing', client_turn_id: clientTurnId });
    // Not in the session's message queue: the socket goes on (pings, a cancel) while the recogniser works.
    void this.recognise(utterance);
  }

  cancel(clientTurnId: string): void {
    if (this.utterance?.clientTurnId !== clientTurnId) return;
    this.finish()!.drop();
  }

  /** The socket is gone, however it went: nothing of its audio is kept. */
  dispose(): void {
    this.finish()?.drop();
    for (const recognition of this.recognitions) recognition.abort();
  }

  /** No audio for a while: the utterance's audio is freed, and its later frames and end are ignored. */
  private idleUtterance(): void {
    if (!this.utterance || this.utterance.dropped) return;
    this.utterance.drop();
    this.line.tell(
      new AppError(
        'speech_unavailable',
        `No audio came for ${this.speech.budget.limits.utteranceIdleMs / 1000} s; this utterance was dropped`,
      ),
    );
  }

  /** The utterance in progress, no longer in progress. */
  private finish(): IncomingUtterance | undefined {
    clearTimeout(this.idle);
    const utterance = this.utterance;
    this.utterance = undefined;
    return utterance;
  }

  private async recognise(utterance: IncomingUtterance): Promise<void> {
    const controller = new AbortController();
    this.recognitions.add(controller);
    try {
      const { deploymentId, language } = this.speaker();
      const heard = await this.speech.recognise(
        utterance.pcm(),
        AUDIO_SAMPLE_RATE,
        utterance.language ?? language,
        deploymentId,
        controller.signal,
      );
      if (this.line.isClosed()) return;
      if (!heard.text)
        return this.line.tell(
          new AppError('speech_unrecognized', 'Nothing could be made out; please try again, or type'),
        );
      this.line.turn({
        client_turn_id: utterance.clientTurnId,
        text: heard.text.slice(0, 4000),
        mode: 'voice',
        ...(utterance.language ? { language: utterance.language } : {}),
        recognition: { engine: heard.engine, durationMs: heard.durationMs, audioMs: utterance.audioMs },
      });
    } catch (err) {
      if (this.line.isClosed()) return;
      if (err instanceof AppError) this.line.tell(err);
      else this.line.failed(err);
    } finally {
      this.recognitions.delete(controller);
    }
  }
}
