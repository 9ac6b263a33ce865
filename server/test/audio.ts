import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from './fuzz-input.js';

// Audio made in the test, as 16-bit PCM at 16 kHz (the rate the widget streams at).

const RATE = 16_000;

/** What espeak-ng says, at 16 kHz (it speaks at 22,050 Hz; linear interpolation is enough for a recogniser). */
export function spoken(text: string, dir: string): Buffer {
  const file = join(dir, 'said.wav');
  const made = spawnSync('espeak-ng', ['-w', file, text]);
  if (made.status !== 0) throw new Error(`espeak-ng: ${made.stderr}`);
  const wav = readFileSync(file);
  const rate = wav.readUInt32LE(24);
  const samples = new Int16Array(
    wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length - ((wav.length - 44) % 2)),
  );
  const out = Buffer.alloc(Math.floor((samples.length * RATE) / rate) * 2);
  for (let i = 0; i < out.length / 2; i++) {
    const x = (i * rate) / RATE;
    const j = Math.floor(x);
    const a = samples[j] ?? 0;
    const b = samples[j + 1] ?? a;
    out.writeInt16LE(Math.round(a + (b - a) * (x - j)), i * 2);
  }
  return out;
}

/** `ms` of audio whose samples `at(i)` gives, from -1 to 1. */
function made(ms: number, at: (i: number) => number): Buffer {
  const out = Buffer.alloc(Math.round((ms * RATE) / 1000) * 2);
  for (let i = 0; i < out.length / 2; i++)
    out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, at(i))) * 32_767), i * 2);
  return out;
}

/** A seeded generator of -1 to 1: the same noise every run. */
function random(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next() * 2 - 1;
}

export const silence = (ms: number): Buffer => made(ms, () => 0);

/** White noise whose loudness (RMS) is `rms` of full scale. */
export function whiteNoise(ms: number, rms: number): Buffer {
  const r = random(7);
  return made(ms, () => r() * rms * Math.sqrt(3));
}

/** Keyboard clicks: a sharp decaying burst every `everyMs`. */
export function keyboard(ms: number, everyMs = 140): Buffer {
  const r = random(3);
  const every = (everyMs * RATE) / 1000;
  return made(ms, (i) => {
    const t = i % every;
    return t < 160 ? r() * 0.9 * Math.exp(-t / 30) : 0;
  });
}

/** A cough: a loud burst of noise, shaped like one (a sharp onset, 250 ms of decay). */
export function cough(): Buffer {
  const r = random(11);
  let low = 0;
  return made(300, (i) => {
    // Some low-pass, as a throat gives it, and a quick attack and decay.
    low = 0.7 * low + 0.3 * r();
    const t = i / RATE;
    return low * 2.4 * Math.min(1, t / 0.01) * Math.exp(-t / 0.09);
  });
}

/** A chord of steady tones (C major), as loud as speech. */
export function chord(ms: number): Buffer {
  return made(ms, (i) =>
    [261.63, 329.63, 392].reduce((sum, f) => sum + 0.15 * Math.sin((2 * Math.PI * f * i) / RATE), 0),
  );
}

/** The loudness of `pcm` (RMS, of full scale). */
export function rmsOf(pcm: Buffer): number {
  // A trailing odd byte is half a sample: not read.
  const samples = Math.floor(pcm.length / 2);
  let sum = 0;
  for (let i = 0; i < samples; i++) sum += (pcm.readInt16LE(i * 2) / 32_768) ** 2;
  return Math.sqrt(sum / samples);
}
