import type { IncomingMessage, ServerResponse } from 'node:http';
import { loopbackEndpoint } from './loopback-endpoint.js';

/** One upload as the transcription server read it. */
export interface Upload {
  authorization: string | undefined;
  fields: Record<string, string>;
  /** What the WAV header says, and how many bytes of samples followed it. */
  wav: { sampleRate: number; channels: number; bitsPerSample: number; dataBytes: number; declaredBytes: number };
}

export type TranscriptionBehaviour = (upload: Upload, res: ServerResponse, req: IncomingMessage) => void;

/** Answers text derived from what it received: `"<n> ms in <language>"`. */
export const hearsLength: TranscriptionBehaviour = (upload, res) =>
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ text: `${(upload.wav.dataBytes / 32).toFixed(0)} ms in ${upload.fields.language}` }));

/** Reads `multipart/form-data` as an OpenAI-compatible transcription endpoint receives it. */
function parseMultipart(
  body: Buffer,
  contentType: string,
): { fields: Record<string, string>; file: Buffer | undefined } {
  const boundary = /boundary=([^;]+)/.exec(contentType)?.[1];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  const fields: Record<string, string> = {};
  let file: Buffer | undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const next = body.indexOf(delimiter, at + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(at + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const content = part.subarray(split + 4);
    const name = /name="([^"]+)"/.exec(head)?.[1] ?? '';
    if (/filename=/.test(head)) file = content;
    else fields[name] = content.toString('utf8');
    at = next;
  }
  return { fields, file };
}

/**
 * A transcription server in the test's process: it checks each upload's WAV and answers as told
 * (by default {@link hearsLength}).
 */
export async function startTranscriptionServer(behaviour?: TranscriptionBehaviour) {
  const uploads: Upload[] = [];
  const endpoint = await loopbackEndpoint(
    '/v1/audio/transcriptions',
    behaviour ?? hearsLength,
    (body, req, res, answer) => {
      const { fields, file } = parseMultipart(body, req.headers['content-type'] ?? '');
      if (
        !file ||
        file.subarray(0, 4).toString('ascii') !== 'RIFF' ||
        file.subarray(8, 12).toString('ascii') !== 'WAVE'
      ) {
        res.writeHead(400).end('{"error":"not a WAV file"}');
        return;
      }
      const upload: Upload = {
        authorization: req.headers.authorization,
        fields,
        wav: {
          channels: file.readUInt16LE(22),
          sampleRate: file.readUInt32LE(24),
          bitsPerSample: file.readUInt16LE(34),
          declaredBytes: file.readUInt32LE(40),
          dataBytes: file.length - 44,
        },
      };
      uploads.push(upload);
      answer(upload, res, req);
    },
  );

  return { url: endpoint.url, uploads, state: endpoint.state, close: endpoint.close };
}
