import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silence, spoken } from '../../server/test/audio.js';
import { startSpeechServer } from '../../server/test/speech-server.js';
import { startTranscriptionServer } from '../../server/test/transcription-server.js';
import { quantile } from '../stats.js';
import { BenchSocket, type Frame, replyTo } from './kit.js';
import { startConcierge } from './service.js';

export const HANDS_FREE = { turns: 20, interruptions: 12, pieceMs: 100, silenceMs: 600, minSpeechMs: 300 } as const;

/** What was measured, in ms: each a p50 and p95 over its rounds. */
export interface HandsFreeFigures {
  /** From the end of the visitor's speech (the last sample of it sent) to the first audio frame of the reply received. */
  endOfSpeechToAudio: { p50: number; p95: number };
  /** From the first sample of speech over the agent's voice sent to `interrupt` received. */
  speechToInterrupt: { p50: number; p95: number };
}

/** Sends `pcm` in pieces at the pace it is spoken; resolves when it is all sent, with the time each piece went. */
async function stream(socket: BenchSocket, pcm: Buffer): Promise<number> {
  const bytes = HANDS_FREE.pieceMs * 32;
  const started = performance.now();
  for (let at = 0, n = 0; at < pcm.length; at += bytes, n++) {
    socket.ws.send(pcm.subarray(at, at + bytes));
    const due = started + (n + 1) * HANDS_FREE.pieceMs;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  }
  return started;
}

/** The first frame `until` accepts from now on. */
const next = (socket: BenchSocket, until: (f: Frame) => boolean) =>
  new Promise<number>((resolve) => {
    socket.onFrame = (f) => {
      if (until(f)) resolve(performance.now());
    };
  });

const figures = (values: number[]) => ({ p50: quantile(values, 0.5), p95: quantile(values, 0.95) });

/**
 * Hands-free voice on a compiled service (README, Hands-free voice), its recogniser, responder
 * (the customer's server replying as its hook is called) and synthesiser all in this process and
 * answering at once: a visitor's open mic streamed in real time, a question and quiet in turn, the
 * wait from the end of each question to the reply's first audio; then, while a long reply plays,
 * speech over it, and the wait to `interrupt`.
 */
export async function handsFreeFigures(): Promise<HandsFreeFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-hands-free-bench-'));
  const question = spoken('What time is breakfast served tomorrow?', dir);
  rmSync(dir, { recursive: true, force: true });
  const transcriber = await startTranscriptionServer((_upload, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"What time is breakfast served tomorrow"}'),
  );
  const synthesiser = await startSpeechServer();
  const agent = new Agent({ keepAlive: true });
  let reply = 'From seven.';
  const concierge = await startConcierge((call, dep) => void replyTo(agent, dep.secret, call, reply), {
    env: { SPEECH_TO_TEXT_URL: transcriber.url, TEXT_TO_SPEECH_URL: synthesiser.url, SPEECH_CONCURRENCY: '16' },
  });
  try {
    const node = concierge.nodes[0]!;
    const put = await fetch(`${node.url}/api/v1/deployments/${concierge.dep.deploymentId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${concierge.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        runtime_config: { reply_timeout_s: 3600, speech_recognition: 'service', speech_synthesis: 'service' },
      }),
    });
    if (!put.ok) throw new Error(`PUT deployment: ${put.status}`);
    // A visitor speaks at most 12 turns a minute (README, Voice in every browser: budgets): a new one every 8.
    let socket: BenchSocket | undefined;
    let visitors = 0;
    const visitor = async () => {
      socket?.close();
      socket = await BenchSocket.session(node.url, concierge.dep, `visitor-${++visitors}`);
      socket.ws.send(
        JSON.stringify({ type: 'audio_start', mode: 'hands_free', client_turn_id: 'mic', sample_rate: 16000 }),
      );
      // A second of quiet first: the model is loaded and warm before anything is measured.
      await stream(socket, silence(1_000));
      return socket;
    };

    const toAudio: number[] = [];
    for (let i = 0; i < HANDS_FREE.turns; i++) {
      if (i % 8 === 0) socket = await visitor();
      const audio = next(socket!, (f) => f.type === 'pcm');
      const started = await stream(socket!, question);
      const speechEnded = started + (question.length / 32_000) * 1000;
      const quiet = stream(socket!, silence(2_500));
      toAudio.push((await audio) - speechEnded);
      await quiet;
    }

    // A reply long enough to be spoken over (20 ms of audio a character on this synthesiser).
    reply = 'Our rooms all face the garden, and each has a balcony with two chairs. '.repeat(4);
    const toInterrupt: number[] = [];
    for (let i = 0; i < HANDS_FREE.interruptions; i++) {
      if (i % 4 === 0) socket = await visitor();
      const audio = next(socket!, (f) => f.type === 'pcm');
      await stream(socket!, question);
      const quiet = stream(socket!, silence(1_500));
      await audio;
      await quiet;
      const interrupted = next(socket!, (f) => f.type === 'interrupt');
      const started = await stream(socket!, question);
      toInterrupt.push((await interrupted) - started);
      await stream(socket!, silence(2_000));
    }
    socket!.close();
    return { endOfSpeechToAudio: figures(toAudio), speechToInterrupt: figures(toInterrupt) };
  } finally {
    await concierge.stop();
    await transcriber.close();
    await synthesiser.close();
    agent.destroy();
  }
}
