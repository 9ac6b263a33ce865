import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { startTranscriptionServer } from '../../server/test/transcription-server.js';
import { wavOf } from '../../server/src/concierge/speech/recogniser.js';
import { quantile } from '../stats.js';
import { cpuSeconds, MEASURED_MEMORY_ARGS } from '../process.js';
import { BenchSocket, replyTo } from './kit.js';
import { startConcierge } from './service.js';

export const RECOGNITION = {
  utterances: 500,
  warmUp: 50,
  utteranceMs: 1_000,
  speakers: 20,
  speakingS: 10,
  held: 100,
  heldMs: 10_000,
} as const;
/** 100 ms of audio: the size a capturing widget sends at a time. */
const FRAME_BYTES = 3_200;

export interface RecognitionFigures {
  /** `audio_end` sent → `turn_accepted` received, and a bare POST of the same upload to the same recogniser (ms). */
  endToTurn: { p50: number; p99: number };
  recogniser: { p50: number; p99: number };
  /** The service's CPU while `speakers` stream audio in real time, per speaker, as a share of one core. */
  cpuPerSpeaker: number;
  /** Resident memory the service holds per utterance in progress (`heldMs` of audio each). */
  bytesPerHeldUtterance: number;
}

const pcmOf = (ms: number) => {
  const pcm = Buffer.alloc(ms * 32);
  for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(Math.round(3000 * Math.sin(i / 6)), i * 2);
  return pcm;
};

/** The recogniser answering at once (a transcription server in this process), the service compiled, on SQLite. */
export async function recognitionFigures(): Promise<RecognitionFigures> {
  const transcriber = await startTranscriptionServer();
  // Each turn is answered, as a customer would, so none waits long enough to hold up the next.
  const agent = new Agent({ keepAlive: true });
  const concierge = await startConcierge((call, dep) => void replyTo(agent, dep.secret, call, 'Noted.'), {
    env: { SPEECH_TO_TEXT_URL: transcriber.url, SPEECH_CONCURRENCY: '256' },
    nodeArgs: MEASURED_MEMORY_ARGS,
  });
  try {
    const node = concierge.nodes[0]!;
    await fetch(`${node.url}/api/v1/deployments/${concierge.dep.deploymentId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${concierge.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        runtime_config: { reply_timeout_s: 3600, hook_timeout_ms: 15_000, speech_recognition: 'service' },
      }),
    }).then((r) => {
      if (!r.ok) throw new Error(`PUT deployment: ${r.status}`);
    });
    const pcm = pcmOf(RECOGNITION.utteranceMs);

    // Latency: one speaker, one utterance after another.
    const socket = await BenchSocket.session(node.url, concierge.dep, 'speaker');
    const endToTurn: number[] = [];
    for (let i = 0; i < RECOGNITION.utterances; i++) {
      const id = `u${i}`;
      socket.ws.send(JSON.stringify({ type: 'audio_start', client_turn_id: id, sample_rate: 16000 }));
      for (let at = 0; at < pcm.length; at += FRAME_BYTES) socket.ws.send(pcm.subarray(at, at + FRAME_BYTES));
      const started = performance.now();
      const answer = await socket.request(
        { type: 'audio_end', client_turn_id: id },
        (f) => (f.type === 'turn_accepted' && f.client_turn_id === id) || f.type === 'error',
      );
      if (answer.type === 'error') throw new Error(`utterance ${id}: ${JSON.stringify(answer)}`);
      endToTurn.push(performance.now() - started);
    }
    socket.close();
    const upload = wavOf({ pcm, sampleRate: 16000 });
    const recogniser: number[] = [];
    for (let i = 0; i < RECOGNITION.utterances; i++) {
      const boundary = `b${randomUUID()}`;
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="u.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
        ),
        upload,
        Buffer.from(
          `\r\n--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen\r\n--${boundary}--\r\n`,
        ),
      ]);
      const started = performance.now();
      await (
        await fetch(transcriber.url, {
          method: 'POST',
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
          body,
        })
      ).text();
      recogniser.push(performance.now() - started);
    }

    // CPU: speakers streaming in real time, 100 ms of audio every 100 ms, an utterance a second each.
    const speakers = await Promise.all(
      Array.from({ length: RECOGNITION.speakers }, (_, i) =>
        BenchSocket.session(node.url, concierge.dep, `speaker-${i}`),
      ),
    );
    const cpuBefore = cpuSeconds(node.child.pid!);
    const wallStarted = performance.now();
    await Promise.all(
      speakers.map(async (speaker, s) => {
        for (let u = 0; u < RECOGNITION.speakingS; u++) {
          const id = `s${s}-${u}`;
          speaker.ws.send(JSON.stringify({ type: 'audio_start', client_turn_id: id, sample_rate: 16000 }));
          for (let at = 0; at < pcm.length; at += FRAME_BYTES) {
            speaker.ws.send(pcm.subarray(at, at + FRAME_BYTES));
            await new Promise((r) => setTimeout(r, 100));
          }
          const answer = await speaker.request(
            { type: 'audio_end', client_turn_id: id },
            (f) => (f.type === 'turn_accepted' && f.client_turn_id === id) || f.type === 'error',
          );
          if (answer.type === 'error') throw new Error(`utterance ${id}: ${JSON.stringify(answer)}`);
        }
      }),
    );
    const cpuPerSpeaker =
      (cpuSeconds(node.child.pid!) - cpuBefore) / ((performance.now() - wallStarted) / 1000) / RECOGNITION.speakers;
    for (const speaker of speakers) speaker.close();

    // Memory: utterances in progress, each holding its audio until its end.
    const holders = await Promise.all(
      Array.from({ length: RECOGNITION.held }, (_, i) => BenchSocket.session(node.url, concierge.dep, `holder-${i}`)),
    );
    const before = await node.settledRss();
    const held = pcmOf(RECOGNITION.heldMs);
    for (const [i, holder] of holders.entries()) {
      holder.ws.send(JSON.stringify({ type: 'audio_start', client_turn_id: `h${i}`, sample_rate: 16000 }));
      for (let at = 0; at < held.length; at += 16_000) holder.ws.send(held.subarray(at, at + 16_000));
    }
    // Every frame has arrived once a ping sent after them is answered.
    await Promise.all(holders.map((h) => h.request({ type: 'ping' }, (f) => f.type === 'pong')));
    const after = await node.settledRss();
    for (const holder of holders) holder.close();
    const q = (xs: number[]) => ({
      p50: quantile(xs.slice(RECOGNITION.warmUp), 0.5),
      p99: quantile(xs.slice(RECOGNITION.warmUp), 0.99),
    });
    return {
      endToTurn: q(endToTurn),
      recogniser: q(recogniser),
      cpuPerSpeaker,
      bytesPerHeldUtterance: (after - before) / RECOGNITION.held,
    };
  } finally {
    await concierge.stop();
    await transcriber.close();
    agent.destroy();
  }
}
