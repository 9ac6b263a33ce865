import { hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Beside the store: the key customers' secrets are sealed with, made at first need (SECRETS_KEY replaces it). */
export const SECRETS_KEY_FILE = 'secrets.key';

/**
 * The key the service seals customers' secrets with (a model endpoint's API key): `SECRETS_KEY`
 * when set (every node of a cluster needs the same one), else `secrets.key` in DATA_DIR, made
 * (0600, 32 random bytes) the first time a secret is sealed. Read lazily: a service that seals
 * nothing makes no file.
 */
export function secretsKey(dataDir: string, given: string | undefined): () => Buffer {
  let key: Buffer | undefined;
  return () => {
    if (!key) {
      const material = given ?? fileKey(dataDir);
      key = Buffer.from(hkdfSync('sha256', material, '', 'concierge sealed secrets', 32));
    }
    return key;
  };
}

function fileKey(dataDir: string): string {
  const file = join(dataDir, SECRETS_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process made it first: theirs is the key.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return readFileSync(file, 'utf8').trim();
}
