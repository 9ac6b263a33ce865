import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * Text sealed with AES-256-GCM under a 32-byte key, as `v1.iv.ciphertext.tag` (base64url): a reader
 * of the store learns nothing from it, and a changed or swapped value does not open. `context`
 * (a customer id, say) is bound in as associated data: a value moved to another row does not open.
 */
export function sealText(key: Buffer, text: string, context = ''): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return [VERSION, iv, sealed, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** The text sealed under this key and context; throws when it was sealed under others, or altered. */
export function openText(key: Buffer, stored: string, context = ''): string {
  const [version, iv, sealed, tag] = stored.split('.');
  if (version !== VERSION || !iv || sealed === undefined || !tag) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
}
