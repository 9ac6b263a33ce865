import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';

export const MiB = 1024 * 1024;
export const KiB = 1024;

export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

export function isJsonContentType(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  if (!type) return false;
  const mime = type.split(';', 1)[0]!.trim().toLowerCase();
  return mime === 'application/json';
}

/**
 * Reads the body as raw bytes, refusing more than `limit`. Signatures are checked on exactly
 * these bytes, so nothing may parse or re-encode them first. Past the limit the rest is still
 * read and discarded, so the client sees the 413 instead of a reset connection.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let overflow = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        overflow = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => (overflow ? reject(tooLarge(limit)) : resolve(Buffer.concat(chunks, size))));
    req.on('error', reject);
  });
}

function tooLarge(limit: number): AppError {
  const readable = limit >= MiB ? `${limit / MiB} MiB` : `${limit / KiB} KiB`;
  return new AppError('payload_too_large', `Request body is larger than ${readable}`);
}

export function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_json', 'Request body is not valid JSON');
  }
}
