import type { RawData } from 'ws';
import { type ClientMessage, clientMessage, type WidgetErrorCode, widgetErrorCodes } from '#protocol/frames';
import { jsonHygieneProblem } from '../../shared/json-hygiene.js';

export const byteLength = (data: RawData): number =>
  Array.isArray(data)
    ? data.reduce((sum, b) => sum + b.length, 0)
    : data instanceof ArrayBuffer
      ? data.byteLength
      : data.length;

export const isWidgetErrorCode = (code: string): code is WidgetErrorCode =>
  (widgetErrorCodes as readonly string[]).includes(code);

export interface ParsedMessage {
  message?: ClientMessage;
  problem?: string;
  /** A binary frame: audio of the utterance in progress. */
  audio?: Buffer;
}

/** A client frame, or why it is not one (JSON text, the text hygiene of README, The management API, then the message schema); binary frames are audio. */
export function parseClientMessage(data: RawData, isBinary: boolean): ParsedMessage {
  if (isBinary)
    return { audio: Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data) };
  let value: unknown;
  try {
    value = JSON.parse(data.toString());
  } catch {
    return { problem: 'The frame is not valid JSON' };
  }
  const unclean = jsonHygieneProblem(value, 'message');
  if (unclean) return { problem: `${unclean.path} ${unclean.message}` };
  const parsed = clientMessage.safeParse(value);
  return parsed.success
    ? { message: parsed.data }
    : {
        problem: `Invalid message: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'message'} ${i.message}`).join('; ')}`,
      };
}
