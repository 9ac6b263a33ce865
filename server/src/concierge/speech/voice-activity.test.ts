import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chord, cough, keyboard, rmsOf, silence, spoken, whiteNoise } from '../../../test/audio.js';
import { VOICE_ACTIVITY_DEFAULTS, VoiceActivity, type VoiceActivityEvent } from './voice-activity.js';

const installed = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

/** What the detector says of `pcm`, fed in pieces of `pieceBytes` (a network's reads are any size). */
async function heard(pcm: Buffer, pieceBytes = 3_200): Promise<VoiceActivityEvent[]> {
  const activity = new VoiceActivity();
  const events: VoiceActivityEvent[] = [];
  for (let at = 0; at < pcm.length; at += pieceBytes)
    events.push(...(await activity.push(pcm.subarray(at, at + pieceBytes))));
  return events;
}

const turns = (events: VoiceActivityEvent[]) =>
  events.filter((e) => e.type !== 'speech').map((e) => ({ type: e.type, atMs: e.atMs }));

describe.skipIf(!installed('espeak-ng'))(
  'voice activity, by Silero VAD on the service (README, Voice in every browser)',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'concierge-vad-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const question = spoken('Where can I park my car tonight?', dir);
    const speechMs = question.length / 32;

    it('finds speech where it is, with the audio from just before it began, and its end', async () => {
      for (const piece of [3_200, 1_000, 77]) {
        const events = await heard(Buffer.concat([silence(500), question, silence(1_000)]), piece);
        expect(turns(events).map((e) => e.type)).toEqual(['speech_started', 'speech_stopped']);
        const [started, stopped] = turns(events).map((e) => e.atMs) as [number, number];
        // espeak-ng begins with a little quiet of its own.
        expect(started).toBeGreaterThanOrEqual(480);
        expect(started).toBeLessThan(800);
        expect(stopped).toBeGreaterThan(500 + speechMs - 400);
        expect(stopped).toBeLessThan(500 + speechMs + VOICE_ACTIVITY_DEFAULTS.hangoverMs + 100);
        // No first syllable lost: the audio handed over reaches back past where speech began.
        const first = events.find((e) => e.type === 'speech_started');
        if (first?.type !== 'speech_started') throw new Error('no start');
        expect(first.fromMs).toBeLessThanOrEqual(500);
        // Every frame from there to the end of the hangover is handed over once.
        const audioMs = events.reduce((ms, e) => ms + ('audio' in e ? e.audio.length / 32 : 0), 0);
        expect(audioMs).toBe(stopped + VOICE_ACTIVITY_DEFAULTS.hangoverMs - 32 - first.fromMs);
      }
    });

    it('keeps one utterance through a breath inside it', async () => {
      // espeak-ng ends with 300 ms of quiet of its own: without it, then a breath of 300 ms.
      const said = question.subarray(0, question.length - 300 * 32);
      const events = await heard(Buffer.concat([silence(300), said, silence(300), question, silence(800)]));
      expect(turns(events).map((e) => e.type)).toEqual(['speech_started', 'speech_stopped']);
    });

    it('hears no speech in white noise as loud as speech, keyboard clicks, a cough, coughing, or a chord', async () => {
      const loud = rmsOf(question);
      const sounds = {
        noise: whiteNoise(3_000, loud),
        keyboard: keyboard(3_000),
        cough: Buffer.concat([silence(300), cough(), silence(700)]),
        coughing: Buffer.concat([cough(), silence(150), cough(), silence(150), cough(), silence(600)]),
        chord: chord(3_000),
      };
      expect(rmsOf(sounds.noise)).toBeGreaterThanOrEqual(loud * 0.95);
      expect(rmsOf(cough())).toBeGreaterThan(loud);
      expect(rmsOf(sounds.chord)).toBeGreaterThan(loud);
      for (const [name, pcm] of Object.entries(sounds))
        expect({ [name]: turns(await heard(pcm)) }).toEqual({ [name]: [] });
    });

    it('hears the question said over noise and after a cough', async () => {
      const noisy = Buffer.from(question);
      const hiss = whiteNoise(speechMs, rmsOf(question) / 8);
      for (let i = 0; i < noisy.length / 2; i++)
        noisy.writeInt16LE(
          Math.max(-32_768, Math.min(32_767, noisy.readInt16LE(i * 2) + hiss.readInt16LE(i * 2))),
          i * 2,
        );
      const events = await heard(Buffer.concat([cough(), silence(400), noisy, silence(800)]));
      expect(turns(events).map((e) => e.type)).toEqual(['speech_started', 'speech_stopped']);
      expect(turns(events)[0]!.atMs).toBeGreaterThanOrEqual(600);
    });
  },
);
