import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silence, spoken } from '../../server/test/audio.js';
import { startSpeechServer } from '../../server/test/speech-server.js';
import { startTranscriptionServer } from '../../server/test/transcription-server.js';
import { api, BenchSocket, type Deployed, type Frame } from './kit.js';

/** 100 ms of 16 kHz audio a piece: what a capturing widget sends at a time. */
export const PIECE_MS = 100;

/** Sends `pcm` in pieces at the pace it is spoken; resolves when it is all sent, with when the first piece went. */
export async function streamSpoken(socket: BenchSocket, pcm: Buffer): Promise<number> {
  const bytes = PIECE_MS * 32;
  const started = performance.now();
  for (let at = 0, n = 0; at < pcm.length; at += bytes, n++) {
    if (socket.ws.readyState !== socket.ws.OPEN) break;
    socket.ws.send(pcm.subarray(at, at + bytes));
    const due = started + (n + 1) * PIECE_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  }
  return started;
}

/** When the first frame `until` accepts arrives from now on. */
export const nextFrame = (socket: BenchSocket, until: (f: Frame) => boolean) =>
  new Promise<number>((resolve) => {
    socket.onFrame = (f) => {
      if (until(f)) resolve(performance.now());
    };
  });

/** The deployment recognises and speaks on the service (README, Hands-free voice), its replies due in an hour. */
export async function speakOnService(serviceUrl: string, apiKey: string, dep: Deployed): Promise<void> {
  await api(serviceUrl, apiKey, 'PUT', `/api/v1/deployments/${dep.deploymentId}`, {
    runtime_config: { reply_timeout_s: 3600, speech_recognition: 'service', speech_synthesis: 'service' },
  });
}

/**
 * A visitor's conversation with its mic open hands-free, after a second of quiet: the voice
 * activity model is loaded and warm before anything is measured.
 */
export async function openMic(serviceUrl: string, dep: Deployed, sub: string): Promise<BenchSocket> {
  const socket = await BenchSocket.session(serviceUrl, dep, sub);
  socket.ws.send(
    JSON.stringify({ type: 'audio_start', mode: 'hands_free', client_turn_id: 'mic', sample_rate: 16000 }),
  );
  await streamSpoken(socket, silence(1_000));
  return socket;
}

/**
 * A visitor's question as espeak-ng says it, and in this process a recogniser that hears it and a
 * synthesiser that speaks any sentence, both answering at once; `env` points a service at them.
 */
export async function scriptedEngines() {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-speech-bench-'));
  const question = spoken('What time is breakfast served tomorrow?', dir);
  rmSync(dir, { recursive: true, force: true });
  const transcriber = await startTranscriptionServer((_upload, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"What time is breakfast served tomorrow"}'),
  );
  const synthesiser = await startSpeechServer();
  return {
    question,
    synthesiserUrl: synthesiser.url,
    env: { SPEECH_TO_TEXT_URL: transcriber.url, TEXT_TO_SPEECH_URL: synthesiser.url },
    async close() {
      await transcriber.close();
      await synthesiser.close();
    },
  };
}
