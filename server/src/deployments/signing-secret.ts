import { randomBase62 } from '../shared/random.js';

/** `whsec_` + 40 base62 characters (about 238 bits); its UTF-8 bytes are the HMAC key. */
export const generateSigningSecret = (): string => `whsec_${randomBase62(40)}`;
