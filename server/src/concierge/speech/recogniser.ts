import type { RecognitionEngine } from '#protocol/frames';

export type { RecognitionEngine };

/** One utterance: 16-bit little-endian mono PCM, and the language it is in (ISO 639-1, `en`). */
export interface Utterance {
  pcm: Buffer;
  sampleRate: number;
  language: string;
}

/** Turns an utterance into text. Audio goes to the recogniser and nowhere else: never the store or the logs. */
export interface Recogniser {
  readonly engine: RecognitionEngine;
  /** The languages it knows (ISO 639-1); absent: any. */
  readonly languages?: readonly string[];
  /** What was said (`''`: nothing recognisable); rejects when the recogniser cannot answer, or on `signal`. */
  recognise(utterance: Utterance, signal: AbortSignal): Promise<string>;
}

/** The utterance as a WAV file: a 44-byte RIFF header before the samples. */
export function wavOf({ pcm, sampleRate }: Pick<Utterance, 'pcm' | 'sampleRate'>): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
