import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { auditOf, inTransaction } from '../audit/audit-trail.js';
import { createCustomer } from '../customers/customer.service.js';
import { ModelEndpointService } from '../model-endpoints/model-endpoint.service.js';
import { openStore } from '../store/db.js';
import { SECRETS_KEY_FILE, secretsKeys } from './secrets-key.js';

const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-keys-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('the secrets key (README, Security)', () => {
  it('is made once, whole, readable by the service alone, and read back the same', () => {
    const dir = newDir();
    const first = secretsKeys(dir, undefined).current();
    expect(readdirSync(dir)).toEqual([SECRETS_KEY_FILE]);
    expect(statSync(join(dir, SECRETS_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, SECRETS_KEY_FILE), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(secretsKeys(dir, undefined).current().equals(first)).toBe(true);
  });

  it('is never made from empty or short material: such a file is refused, saying what to do', () => {
    for (const held of ['', '\n', 'abc\n']) {
      const dir = newDir();
      writeFileSync(join(dir, SECRETS_KEY_FILE), held, { mode: 0o600 });
      expect(() => secretsKeys(dir, undefined).current()).toThrow(
        /secrets\.key holds (nothing|too little) to make the secrets key from: restore it from a backup/,
      );
    }
  });

  it('rotates: a previous SECRETS_KEY still opens what it sealed, which is sealed again under the new one, and reseal-secrets does it for all', async () => {
    const dir = newDir();
    const store = await openStore({ databaseUrl: undefined, dataDir: dir });
    try {
      const { customerId } = await createCustomer(store.db, 'Hotel');
      const audit = auditOf(customerId, 'admin');
      const service = (keys: ReturnType<typeof secretsKeys>) =>
        new ModelEndpointService({ db: store.db, writes: inTransaction(store.db), keys });
      const [old, next] = ['a'.repeat(40), 'b'.repeat(40)];
      const ids = [];
      for (const name of ['One', 'Two'])
        ids.push(
          (
            await service(secretsKeys(dir, old)).create(
              customerId,
              { name, base_url: 'https://models.example/v1', api_key: `sk-${name}` },
              audit,
            )
          ).id,
        );
      // The new key alone cannot open them.
      await expect(service(secretsKeys(dir, next)).target(customerId, ids[0]!)).rejects.toThrow();
      // With the old one as previous, the first opens, and is sealed again under the new key at once.
      const rotating = service(secretsKeys(dir, next, [old]));
      expect((await rotating.target(customerId, ids[0]!))?.key).toBe('sk-One');
      expect((await service(secretsKeys(dir, next)).target(customerId, ids[0]!))?.key).toBe('sk-One');
      expect(await rotating.resealAll()).toEqual({ resealed: 2, unopened: 0 });
      expect((await service(secretsKeys(dir, next)).target(customerId, ids[1]!))?.key).toBe('sk-Two');
      expect(await service(secretsKeys(dir, 'c'.repeat(40))).resealAll()).toEqual({ resealed: 0, unopened: 2 });
    } finally {
      await store.close();
    }
  });
});
