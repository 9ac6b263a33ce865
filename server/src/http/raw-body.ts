import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';
import { jsonHygieneProblem } from '../shared/json-hygiene.js';

export const MiB = 1024 * 1024;
export const KiB = 1024;
/** A body must arrive within this long of its headers; a slower one is cut off (the socket is closed). */
export const BODY_TIMEOUT_MS = 10_000;

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
 * read and discarded, so the client sees the 413 instead of a reset connection. A body still
 * arriving `timeoutMs` after the headers is cut off: a slow body holds a socket and a buffer.
 */
export function readRawBody(req: IncomingMessage, limit: number, timeoutMs = BODY_TIMEOUT_MS): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const slow = setTimeout(() => req.destroy(), timeoutMs);
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
    req.on('end', () => {
      clearTimeout(slow);
      if (overflow) reject(tooLarge(limit));
      else resolve(Buffer.concat(chunks, size));
    });
    // The client hung up mid-body (or was too slow): its fault, not ours, and nobody is left to read the answer.
    const cut = () => reject(new AppError('invalid_request', 'The request body ended before it was complete'));
    req.on('error', cut);
    req.on('close', () => {
      clearTimeout(slow);
      if (!req.readableEnded) cut();
    });
  });
}

function tooLarge(limit: number): AppError {
  const readable = limit >= MiB ? `${limit / MiB} MiB` : `${limit / KiB} KiB`;
  return new AppError('payload_too_large', `Request body is larger than ${readable}`);
}

/**
 * The body as JSON, held to the text hygiene of README, The management API before anything else reads it. Bytes that
 * are not UTF-8 are refused, never decoded into U+FFFD: the service would store, and sign over,
 * text the client never sent.
 */
export function parseJson(raw: Buffer): unknown {
  if (!isUtf8(raw)) throw new AppError('invalid_json', 'Request body is not valid UTF-8');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_json', 'Request body is not valid JSON');
  }
  assertCleanInput(value, 'body');
  return value;
}

/** Refuses input that breaks the text hygiene rule (see {@link jsonHygieneProblem}) with `400 invalid_request`. */
export function assertCleanInput(value: unknown, root: string): void {
  const problem = jsonHygieneProblem(value, root);
  if (problem) throw new AppError('invalid_request', `Invalid ${root}`, [problem]);
}
