import { type EgressPolicy, guardedPost } from '../../shared/egress.js';
import type { Synthesiser } from './synthesiser.js';

export interface OpenAiSpeechSettings {
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer`; never logged. */
  key: string | undefined;
  /** One sentence's whole exchange; the caller's signal may end it sooner. */
  timeoutMs: number;
}

/** What OpenAI's speech endpoint streams for `response_format: "pcm"`: 24 kHz, 16-bit, mono. */
const SAMPLE_RATE = 24_000;
/** The voice every OpenAI-compatible server knows (Kokoro-FastAPI and openedai-speech map it too). */
const DEFAULT_VOICE = 'alloy';
const NOT_AUDIO = /json|html|^text\//i;

/**
 * An OpenAI-compatible speech endpoint (what Kokoro-FastAPI, openedai-speech with Piper and hosted
 * speech APIs speak): `{model, input, voice, speed, response_format: "pcm"}` POSTed, raw PCM streamed
 * back and handed on as it arrives. Called under the same egress guard as the hooks.
 */
export function openAiSpeech(settings: OpenAiSpeechSettings, egress: EgressPolicy): Synthesiser {
  return {
    engine: 'openai-compatible',
    sampleRate: SAMPLE_RATE,
    voiceFor: ({ voice }) => voice ?? DEFAULT_VOICE,
    async synthesise(request, audio, signal) {
      const body = JSON.stringify({
        model: settings.model,
        input: request.text,
        voice: this.voiceFor(request),
        speed: request.speed,
        response_format: 'pcm',
      });
      const headers = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'concierge-speech/1',
        accept: 'audio/pcm, application/octet-stream',
        ...(settings.key ? { authorization: `Bearer ${settings.key}` } : {}),
      };
      const response = await guardedPost(settings.url, body, headers, settings.timeoutMs, egress, signal, {
        // A 2xx that is a page or JSON (a proxy's login, an error in the wrong status) is not audio.
        wanted: (status, answer) => status >= 200 && status <= 299 && !NOT_AUDIO.test(answer['content-type'] ?? ''),
        data: audio,
      });
      if (response.status < 200 || response.status > 299)
        throw new Error(`the synthesiser answered ${response.status}`);
      if (NOT_AUDIO.test(response.headers['content-type'] ?? ''))
        throw new Error(`the synthesiser answered ${response.headers['content-type']}, not audio`);
    },
  };
}
