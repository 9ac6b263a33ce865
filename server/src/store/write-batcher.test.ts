import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from './database.js';
import { openStore, type Store } from './db.js';
import { WriteBatcher } from './write-batcher.js';

describe('group commit', () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-batch-'));
    store = await openStore({ dataDir: dir });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const flag = (trx: Db, name: string) => trx.insertInto('service_flags').values({ name, created_at: new Date().toISOString() }).execute();
  const names = async () => (await store.db.selectFrom('service_flags').select('name').orderBy('name').execute()).map((r) => r.name);

  it('commits what one tick asks for together, and a failing unit fails alone', async () => {
    const batcher = new WriteBatcher(store.db);
    let outsideTransaction = 0;
    const counted = (name: string) => async (trx: Db) => {
      if (!trx.isTransaction) outsideTransaction++;
      await flag(trx, name);
      return name;
    };
    const results = await Promise.allSettled([
      batcher.run('k1', counted('a')),
      batcher.run('k2', counted('b')),
      // The same name again: the primary key refuses it, so the batch rolls back and each unit runs alone.
      batcher.run('k3', counted('a')),
      batcher.run('k4', counted('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<string>).value)).toEqual(['a', 'b', 'c']);
    expect(String((results[2] as PromiseRejectedResult).reason)).toContain('UNIQUE');
    expect(await names()).toEqual(['a', 'b', 'c']);
    expect(outsideTransaction).toBe(0);
  });

  it('runs the units of one key in the order asked, whatever the other keys', async () => {
    const batcher = new WriteBatcher(store.db);
    const order: string[] = [];
    const unit = (name: string) => async (trx: Db) => {
      order.push(name);
      await flag(trx, name);
    };
    await Promise.all([batcher.run('z', unit('z1')), batcher.run('m', unit('m1')), batcher.run('z', unit('z2')), batcher.run('a', unit('a1')), batcher.run('z', unit('z3'))]);
    // Sorted by key (the lock order), stable within a key.
    expect(order).toEqual(['a1', 'm1', 'z1', 'z2', 'z3']);
  });
});
