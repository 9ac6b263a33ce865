import { createHash } from 'node:crypto';

/** How a bearer secret (an API key, a session or welcome token) is kept: its SHA-256, in hex. Only this is stored. */
export const secretDigest = (secret: string): string => createHash('sha256').update(secret).digest('hex');
