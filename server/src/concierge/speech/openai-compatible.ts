import { randomUUID } from 'node:crypto';
import { type EgressPolicy, guardedPost } from '../../shared/egress.js';
import { type Recogniser, wavOf } from './recogniser.js';

export interface OpenAiCompatibleSettings {
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer`; never logged. */
  key: string | undefined;
  /** The whole exchange; the caller's signal may end it sooner. */
  timeoutMs: number;
}

/**
 * An OpenAI-compatible transcription endpoint (what whisper.cpp's server, faster-whisper servers,
 * LocalAI and hosted speech APIs speak): the utterance as a multipart WAV upload, `{"text"}` back.
 * Called under the same egress guard as the hooks.
 */
export function openAiCompatible(settings: OpenAiCompatibleSettings, egress: EgressPolicy): Recogniser {
  return {
    engine: 'openai-compatible',
    async recognise(utterance, signal) {
      const boundary = `concierge-${randomUUID()}`;
      const fields: [string, string][] = [
        ['model', settings.model],
        ['language', utterance.language],
        ['response_format', 'json'],
      ];
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="utterance.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
        ),
        wavOf(utterance),
        Buffer.from(
          fields
            .map(
              ([name, value]) => `\r\n--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}`,
            )
            .join('') + `\r\n--${boundary}--\r\n`,
        ),
      ]);
      const headers = {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(body.length),
        'user-agent': 'concierge-speech/1',
        accept: 'application/json',
        ...(settings.key ? { authorization: `Bearer ${settings.key}` } : {}),
      };
      const response = await guardedPost(settings.url, body, headers, settings.timeoutMs, egress, signal);
      if (response.status < 200 || response.status > 299) throw new Error(`the recogniser answered ${response.status}`);
      let answer: unknown;
      try {
        answer = JSON.parse(response.body);
      } catch {
        throw new Error('the recogniser answered with something other than JSON');
      }
      const text = (answer as { text?: unknown } | null)?.text;
      if (typeof text !== 'string') throw new Error('the recogniser answered JSON without a "text" string');
      return text.trim();
    },
  };
}
