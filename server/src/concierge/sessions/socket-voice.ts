import { randomUUID } from 'node:crypto';
import type { ClientMessage, RecognitionSite, ServerFrame, SynthesisSite, TurnMode, VoiceMode } from '#protocol/frames';
import { inLanguage } from '#protocol/in-language';
import { serviceWords } from '../service-words.js';
import { OpenMic } from './open-mic.js';
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

/** What a socket's voice keeps through the session (README, Hands-free voice). */
export interface VoiceRecords {
  /** A hands-free turn's reply began to be heard `ms` after the visitor stopped speaking. */
  firstAudio(turnId: string, ms: number): void;
  /** The agent asks a quiet visitor, once, if they are still there. */
  reengage(text: string): void;
}

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
  /** The hands-free visitor's mic, from `audio_start` to `audio_end`. */
  #openMic: OpenMic | undefined;
  /** The last open mic, which may still make a turn after its `audio_end` and measure its reply. */
  #lastMic: OpenMic | undefined;
  /** Whether a person is in the conversation, as its events said. */
  #person = false;

  constructor(
    private readonly line: SessionLine,
    socket: SessionSocket,
    private readonly services: { speech: SpeechRecognition; synthesis: SpeechSynthesis },
    private readonly records: VoiceRecords,
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
      firstAudio: (turnId) => {
        const ms = this.#lastMic?.turns.firstAudio(turnId);
        if (ms !== undefined) records.firstAudio(turnId, ms);
      },
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
      mode: this.#mode(),
    };
  }

  /** The visitor sent a turn, or began speaking one: whatever the agent is still saying is cut short. */
  asked(clientTurnId: string, mode: TurnMode): void {
    this.#out.asked(clientTurnId, mode);
  }

  message(message: AudioMessage): void {
    const mic = this.#openMic;
    if (message.type !== 'audio_start' && mic && (!message.client_turn_id || message.client_turn_id === mic.base)) {
      this.#openMic = undefined;
      return message.type === 'audio_end' ? mic.end() : mic.dispose();
    }
    if (message.type === 'audio_start' && (mic || (message.mode === 'hands_free' && this.#in.busy)))
      return this.line.tell(
        new AppError('invalid_message', 'The microphone is already streaming: end it with audio_end first'),
      );
    if (message.type === 'audio_start' && message.mode === 'hands_free')
      return this.#listen(message.client_turn_id, message.language);
    if (!message.client_turn_id)
      return this.line.tell(new AppError('invalid_message', 'No open microphone to end: client_turn_id is required'));
    if (message.type === 'audio_end') return this.#in.end(message.client_turn_id);
    if (message.type === 'audio_cancel') return this.#in.cancel(message.client_turn_id);
    this.#out.asked(message.client_turn_id, 'voice');
    this.#in.start({ ...message, client_turn_id: message.client_turn_id });
  }

  audio(frame: Buffer): void {
    if (this.#openMic) this.#openMic.frame(frame);
    else this.#in.frame(frame);
  }

  /** A stored frame the socket just sent: the agent's words to say, as they come; the open mic's turns and their answers. */
  sent(frame: StoredFrame): void {
    this.#out.sent(frame);
    this.#heard(frame);
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
    this.#openMic?.dispose();
    this.#out.dispose();
  }

  /** `audio_start {mode: "hands_free"}`: the mic opens, or is refused and its frames ignored until `audio_end`. */
  #listen(base: string | undefined, language: string | undefined): void {
    const mic = new OpenMic(base ?? `hf-${randomUUID()}`, language, {
      line: this.line,
      speech: this.services.speech,
      speaker: () => ({
        deploymentId: this.line.dep.id,
        conversationId: this.line.conversationId!,
        sub: this.line.sub!,
        language: this.#language,
      }),
      voice: this.#out,
      turnTaking: () => this.line.dep.voice.speech.turnTaking,
      personPresent: () => this.#person,
      reengage: () => this.records.reengage(this.#reengageText()),
    });
    this.#openMic = mic;
    this.#lastMic = mic;
    const refusal =
      this.#recognitionSite() !== 'service'
        ? new AppError(
            'speech_unavailable',
            'Speech is not recognised by the service for this widget; please type instead',
          )
        : this.#mode() !== 'hands_free'
          ? new AppError(
              'invalid_message',
              "This deployment's visitors press the mic for each utterance (runtime_config.voice_mode is push_to_talk)",
            )
          : undefined;
    if (!refusal) return;
    mic.dispose();
    this.line.tell(refusal);
  }

  #heard({ type, frame, event: written }: StoredFrame): void {
    if (type === 'operator_joined' || type === 'operator_left') this.#person = type === 'operator_joined';
    if (type === 'conversation_ended') this.#openMic?.stop('ended');
    const mic = this.#lastMic;
    if (!mic || (type !== 'turn_accepted' && type !== 'reply' && type !== 'turn_failed')) return;
    const event = (written ?? JSON.parse(frame)) as Extract<
      ServerFrame,
      { type: 'turn_accepted' | 'reply' | 'turn_failed' }
    >;
    if (event.type === 'turn_accepted') mic.turns.accepted(event.client_turn_id, event.turn_id);
    else mic.turns.answered(event.turn_id);
  }

  /** What the agent asks a quiet visitor: its words in the conversation's language, else the service's. */
  #reengageText(): string {
    const { reengage_text: text } = this.line.dep.voice.speech.turnTaking;
    const languages = [this.#language, this.line.dep.agent.language];
    return (text && inLanguage(text, languages)) ?? serviceWords(this.#language).stillThere;
  }

  /** How the visitor talks: hands-free only where the service recognises their speech. */
  #mode(): VoiceMode {
    return this.#recognitionSite() === 'service' ? (this.line.dep.voice.mode ?? 'hands_free') : 'push_to_talk';
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
