import type { IncomingMessage, ServerResponse } from 'node:http';
import { loopbackEndpoint } from './loopback-endpoint.js';

/** One request as the speech server read it. */
export interface SpeechCall {
  authorization: string | undefined;
  contentType: string | undefined;
  body: Record<string, unknown>;
}

/** What the server answers a call with; by default {@link speaks}. */
export type SpeechBehaviour = (call: SpeechCall, res: ServerResponse, req: IncomingMessage) => void;

/** 24 kHz, as OpenAI's `pcm` format: what the service is told to expect. */
export const SPEECH_SAMPLE_RATE = 24_000;

/** The audio the server makes of `input`: 20 ms a character, a tone (never silence), the same for the same text. */
export function pcmOf(input: string): Buffer {
  const samples = input.length * (SPEECH_SAMPLE_RATE / 50);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(6000 * Math.sin(i / 6)), i * 2);
  return pcm;
}

/** Chunk sizes that split samples and cross 16 KiB: how a real server's writes reach a socket. */
const UNEVEN = [1, 4095, 17_001, 3, 9_998, 24_577];

/** Streams {@link pcmOf} `input` in uneven chunks, a few milliseconds apart, as a streaming engine does. */
export const speaks: SpeechBehaviour = (call, res) => {
  const pcm = pcmOf(String(call.body.input));
  res.writeHead(200, { 'content-type': 'audio/pcm', 'transfer-encoding': 'chunked' });
  let at = 0;
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (at >= pcm.length) return void res.end();
    const size = UNEVEN[i++ % UNEVEN.length]!;
    res.write(pcm.subarray(at, at + size));
    at += size;
    setTimeout(next, 2);
  };
  next();
};

/**
 * An OpenAI-compatible speech endpoint in the test's process (`POST /v1/audio/speech`): it refuses
 * a body that is not the documented JSON, and answers as told.
 */
export async function startSpeechServer(behaviour: SpeechBehaviour = speaks) {
  const calls: SpeechCall[] = [];
  const endpoint = await loopbackEndpoint('/v1/audio/speech', behaviour, (raw, req, res, answer) => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"not JSON"}');
    }
    const documented = ['input', 'model', 'response_format', 'speed', 'voice'];
    if (
      req.method !== 'POST' ||
      req.url !== '/v1/audio/speech' ||
      Object.keys(body).sort().join() !== documented.join() ||
      typeof body.input !== 'string' ||
      body.response_format !== 'pcm'
    )
      return void res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":"unexpected request"}');
    const call = { authorization: req.headers.authorization, contentType: req.headers['content-type'], body };
    calls.push(call);
    answer(call, res, req);
  });

  return { url: endpoint.url, calls, state: endpoint.state, close: endpoint.close };
}
