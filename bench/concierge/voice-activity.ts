import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VoiceActivity } from '../../server/src/concierge/speech/voice-activity.js';
import { keyboard, silence, spoken, whiteNoise } from '../../server/test/audio.js';

/** Open mics measured at once, and the audio each hears: a question, quiet, a room's noise, in turn. */
export const VAD = { mics: 20, seconds: 30, pieceMs: 100 } as const;

/**
 * The voice activity model's cost per open mic (README, Voice in every browser): `VAD.mics` streams
 * fed piece by piece, interleaved as sockets deliver them, their CPU measured against the audio's
 * length (a share of a core per visitor), and the heap each stream holds.
 */
export async function voiceActivityFigures() {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-vad-bench-'));
  const question = spoken('Could you book me a table for two tonight, at eight?', dir);
  rmSync(dir, { recursive: true, force: true });
  const round = Buffer.concat([question, silence(1_500), keyboard(1_500), whiteNoise(1_500, 0.02)]);
  const rounds = Math.ceil((VAD.seconds * 32_000) / round.length);
  const audio = Buffer.concat(Array.from({ length: rounds }, () => round)).subarray(0, VAD.seconds * 32_000);
  const piece = VAD.pieceMs * 32;
  // The model loaded and warm before anything is measured.
  await new VoiceActivity().push(audio.subarray(0, 32_000));
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const mics = Array.from({ length: VAD.mics }, () => new VoiceActivity());
  let started = 0;
  const cpu = process.cpuUsage();
  const wall = performance.now();
  for (let at = 0; at < audio.length; at += piece)
    for (const events of await Promise.all(mics.map((mic) => mic.push(audio.subarray(at, at + piece)))))
      started += events.filter((e) => e.type === 'speech_started').length;
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - wall;
  global.gc?.();
  const heapPerMic = (process.memoryUsage().heapUsed - heapBefore) / VAD.mics;
  const audioMs = VAD.seconds * 1000 * VAD.mics;
  return {
    coreShare: (used.user + used.system) / 1000 / audioMs,
    wallMs,
    realTimeFactor: wallMs / (VAD.seconds * 1000),
    heapPerMic,
    questionsHeard: started / VAD.mics,
    questionsSaid: rounds,
  };
}
