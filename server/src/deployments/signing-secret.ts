import { randomBase62 } from '../shared/random.js';

/** `whsec_` + 40 base62 characters (about 238 bits); its UTF-8 bytes are the HMAC key. */
export const generateSigningSecret = (): string => `whsec_${randomBase62(40)}`;

/** The secrets that verify now: the current one, and the previous one inside its grace period. */
export function liveSecrets(
  row: { signing_secret: string; previous_secret: string | null; previous_secret_expires_at: string | null },
  now = new Date(),
): string[] {
  const previousLive =
    row.previous_secret !== null &&
    row.previous_secret_expires_at !== null &&
    Date.parse(row.previous_secret_expires_at) > now.getTime();
  return previousLive ? [row.signing_secret, row.previous_secret!] : [row.signing_secret];
}
