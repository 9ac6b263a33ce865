import { hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Beside the store: the key customers' secrets are sealed with, made at first need (SECRETS_KEY replaces it). */
export const SECRETS_KEY_FILE = 'secrets.key';

/** What a key is made from, at least: 32 characters (a SECRETS_KEY, or the file's 64 hex digits). */
const MATERIAL_CHARS = 32;

/** The keys customers' secrets are sealed with (README, Security). */
export interface SecretsKeys {
  /** What new values are sealed with. */
  current(): Buffer;
  /** Every key a stored value may be sealed with: the current one first, then SECRETS_KEY_PREVIOUS's. */
  all(): Buffer[];
}

const derived = (material: string): Buffer =>
  Buffer.from(hkdfSync('sha256', material, '', 'concierge sealed secrets', 32));

/**
 * The keys the service seals customers' secrets with (a model endpoint's API key): `SECRETS_KEY`
 * when set (every node of a cluster needs the same one), else `secrets.key` in DATA_DIR, made
 * (0600, 32 random bytes) the first time a secret is sealed; during a rotation also the keys of
 * SECRETS_KEY_PREVIOUS, which still open what they sealed (`npm run admin -- reseal-secrets` seals
 * everything again under the current one). Read lazily: a service that seals nothing makes no
 * file. Key material is never empty: a file that holds too little is refused, not used.
 */
export function secretsKeys(dataDir: string, given: string | undefined, previous: readonly string[] = []): SecretsKeys {
  let keys: Buffer[] | undefined;
  const all = () => (keys ??= [given ?? fileKey(dataDir), ...previous].map(derived));
  return { current: () => all()[0]!, all };
}

function fileKey(dataDir: string): string {
  const file = join(dataDir, SECRETS_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    // Written whole under another name, then linked into place: a reader never sees half a key,
    // and of two processes making it at once, the first link wins and the other reads it.
    const made = `${file}.${randomBytes(6).toString('hex')}`;
    writeFileSync(made, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(made, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(made);
    }
  }
  const material = readFileSync(file, 'utf8').trim();
  if (material.length < MATERIAL_CHARS)
    throw new Error(
      `${file} holds ${material.length ? 'too little' : 'nothing'} to make the secrets key from: restore it from a backup (the secrets sealed with it cannot be opened without it), or set SECRETS_KEY`,
    );
  return material;
}
