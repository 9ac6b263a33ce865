import type { ClientMessage, RecognitionSite, ServerFrame, SynthesisSite, TurnMode } from '#protocol/frames';
import { AppError } from '../../errors.js';
import type { Heard } from '../conversations/heard.js';
import type { StoredFrame } from '../events/event.repository.js';
import { speechRequestFor } from '../speech/agent-voice.js';
import type { SpeechRecognition } from '../speech/speech-recognition.js';
import { recognitionFallback, recognitionSite, synthesisSite } from '../speech/speech-sites.js';
import type { SpeechSynthesis } from '../speech/speech-synthesis.js';
import type { SessionLine } from './session-line.js';
import type { SessionSocket } from './session-socket.js';
import { VoiceInput } from './voice-input.js';
import { VoiceOutput } from './voice-output.js';

type AudioMessage = Extract<ClientMessage, { type: 'audio_start' | 'audio_end' | 'audio_cancel' }>;

/**
 * A socket's voice (README, Voice in every browser; The agent's own voice): the visitor's speech
 * coming in and the agent's going out, where each is recognised and said under the deployment's
 * settings as they are now, and what the visitor heard. The session hands it its line and the
 * socket's voice messages; nothing of the voice lives in the session.
 */
export class SocketVoice {
  /** What `hello` said of the browser: whether it recognises speech itself. */
  #browserRecognition = true;
  /** The conversation's language, for an utterance that names none. */
  #language = 'en-US';
  readonly #in: VoiceInput;
  readonly #out: VoiceOutput;

  constructor(
    private readonly line: SessionLine,
    socket: SessionSocket,
    private readonly services: { speech: SpeechRecognition; synthesis: SpeechSynthesis },
  ) {
    this.#in = new VoiceInput(
      line,
      () => ({
        deploymentId: line.dep.id,
        conversationId: line.conversationId!,
        sub: line.sub!,
        language: this.#language,
        site: this.#recognitionSite(),
      }),
      services.speech,
    );
    this.#out = new VoiceOutput({
      line,
      socket,
      synthesis: services.synthesis,
      site: () => this.#synthesisSite(),
      request: (text, language) => speechRequestFor(text, language, line.dep.voice.speech, line.dep.agent.language),
    });
  }

  /** The conversation is joined: what `ready` says of its speech. */
  joined(hello: { browserRecognition: boolean; language: string }): Extract<ServerFrame, { type: 'ready' }>['speech'] {
    this.#browserRecognition = hello.browserRecognition;
    this.#language = hello.language;
    const fallback = this.#recognitionFallback();
    return {
      recognition: this.#recognitionSite(),
      ...(this.line.dep.voice.recognition === 'off' ? { text_only: true } : {}),
      ...(fallback ? { fallback } : {}),
      synthesis: this.#synthesisSite(),
    };
  }

  /** The visitor sent a turn, or began speaking one: whatever the agent is still saying is cut short. */
  asked(clientTurnId: string, mode: TurnMode): void {
    this.#out.asked(clientTurnId, mode);
  }

  message(message: AudioMessage): void {
    if (message.type === 'audio_end') return this.#in.end(message.client_turn_id);
    if (message.type === 'audio_cancel') return this.#in.cancel(message.client_turn_id);
    this.#out.asked(message.client_turn_id, 'voice');
    this.#in.start(message);
  }

  audio(frame: Buffer): void {
    this.#in.frame(frame);
  }

  /** A stored frame the socket just sent: the agent's words to say, as they come. */
  sent(frame: StoredFrame): void {
    this.#out.sent(frame);
  }

  /** How far the visitor listened to a reply this socket spoke; undefined for one it did not. */
  playback(message: Extract<ClientMessage, { type: 'playback' }>): Heard | undefined {
    return this.#out.heard(message.turn_id, message.sentence, message.offset_ms, message.state);
  }

  /** The browser's own recognition failed here (README, Voice in every browser): the service's hears this widget from now on. */
  fallBack(): void {
    if (!this.#recognitionFallback())
      return this.line.tell(
        new AppError('invalid_message', "This widget's speech has no fallback: ready.speech.fallback names none"),
      );
    this.#browserRecognition = false;
  }

  /** The socket is gone, however it went: nothing of its audio is kept, every synthesis of it ends. */
  dispose(): void {
    this.#in.dispose();
    this.#out.dispose();
  }

  #recognitionSite(): RecognitionSite {
    const { speech } = this.services;
    return recognitionSite(this.line.dep.voice.recognition, this.#browserRecognition, speech.available);
  }

  #recognitionFallback(): 'service' | undefined {
    const { speech } = this.services;
    return recognitionFallback(this.line.dep.voice.recognition, this.#browserRecognition, speech.available);
  }

  #synthesisSite(): SynthesisSite {
    return synthesisSite(this.line.dep.voice.synthesis, this.services.synthesis.engine !== undefined);
  }
}
