import { crc32 } from 'node:zlib';
import { base62Fixed, randomBase62 } from '../shared/random.js';
import { secretDigest } from '../shared/secret-digest.js';

const PREFIX = 'vak_';
const BODY_LENGTH = 32;
const CHECK_LENGTH = 6;
const SHAPE = /^vak_[0-9A-Za-z]{38}$/;

const checksum = (body: string): string => base62Fixed(crc32(body), CHECK_LENGTH);

/** `vak_` + 32 random base62 + 6 base62 of their CRC32, so scanners and typos are caught offline. */
export function generateApiKey(): string {
  const body = randomBase62(BODY_LENGTH);
  return `${PREFIX}${body}${checksum(body)}`;
}

/** Shape and checksum only: a mistyped or invented key is refused before any lookup. */
export function isWellFormedApiKey(key: string): boolean {
  if (!SHAPE.test(key)) return false;
  const body = key.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return key.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

export const hashApiKey = secretDigest;

export const keyPrefix = (key: string): string => key.slice(0, 8);
export const keyLast4 = (key: string): string => key.slice(-4);
