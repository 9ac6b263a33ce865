import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '../database.js';
import { openStore, type Store } from './db.js';
import { WriteBatcher } from './write-batcher.js';
import { queryShape } from './query-shape.js';

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

  const flag = (trx: Db, name: string) =>
    trx.insertInto('service_flags').values({ name, created_at: new Date().toISOString() }).execute();
  const names = async () =>
    (await store.db.selectFrom('service_flags').select('name').orderBy('name').execute()).map((r) => r.name);

  /** A unit that stores a flag and notes the transaction it ran in (the last run counts). */
  const noting = (seen: Map<string, Db>) => (name: string) => async (trx: Db) => {
    seen.set(name, trx);
    await flag(trx, name);
    return name;
  };

  it('commits the changes asked for together in one transaction', async () => {
    const seen = new Map<string, Db>();
    const unit = noting(seen);
    const batcher = new WriteBatcher(store.db);
    expect(
      await Promise.all([batcher.run('k1', unit('t1')), batcher.run('k2', unit('t2')), batcher.run('k3', unit('t3'))]),
    ).toEqual(['t1', 't2', 't3']);
    expect(new Set(seen.values()).size).toBe(1);
    expect([...seen.values()][0]!.isTransaction).toBe(true);
  });

  it('rolls a failed batch back and runs each unit alone, so only the failing one fails', async () => {
    const seen = new Map<string, Db>();
    const unit = noting(seen);
    const batcher = new WriteBatcher(store.db);
    const results = await Promise.allSettled([
      batcher.run('k1', unit('a')),
      batcher.run('k2', unit('b')),
      // The same name again: the primary key refuses it.
      batcher.run('k3', unit('a')),
      batcher.run('k4', unit('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[2] as PromiseRejectedResult).reason)).toContain('UNIQUE');
    expect(await names()).toEqual(expect.arrayContaining(['a', 'b', 'c']));
    // After the rollback every unit ran in a transaction of its own.
    expect(new Set([seen.get('b'), seen.get('c'), seen.get('a')]).size).toBe(3);
  });

  it('runs the units of one key in the order asked, whatever the other keys', async () => {
    const batcher = new WriteBatcher(store.db);
    const order: string[] = [];
    const unit = (name: string) => async (trx: Db) => {
      order.push(name);
      await flag(trx, name);
    };
    await Promise.all([
      batcher.run('z', unit('z1')),
      batcher.run('m', unit('m1')),
      batcher.run('z', unit('z2')),
      batcher.run('a', unit('a1')),
      batcher.run('z', unit('z3')),
    ]);
    // Sorted by key (the lock order), stable within a key.
    expect(order).toEqual(['a1', 'm1', 'z1', 'z2', 'z3']);
  });

  it("runs a batch in its own transaction on SQLite's connection with `direct`, where nothing from outside lands", async () => {
    const flagShape = queryShape((db, v: { name: string; at: string }) =>
      db.insertInto('service_flags').values({ name: v.name, created_at: v.at }),
    );
    const batcher = new WriteBatcher(store.db, { direct: store.direct });
    const at = new Date().toISOString();
    const directNames = async () => (await names()).filter((n) => n.startsWith('direct-'));
    let held: Db | undefined;
    let failNow!: () => void;
    const failing = batcher.run('k', async (trx) => {
      held = trx;
      await flagShape(trx, { name: 'direct-1', at });
      await flag(trx, 'direct-2');
      await new Promise<void>((resolve) => (failNow = resolve));
      throw new Error('the unit failed');
    });
    await vi.waitFor(() => expect(failNow).toBeDefined());
    // Asked while the batch holds the connection: it waits, rather than running inside the batch's transaction.
    const outside = flag(store.db, 'direct-3');
    await new Promise((resolve) => setImmediate(resolve));
    failNow();
    await expect(failing).rejects.toThrow('the unit failed');
    await outside;
    expect(await directNames()).toEqual(['direct-3']);
    // The batch is over: its transaction runs nothing more, through a shape or a query.
    await expect(flagShape(held!, { name: 'direct-4', at })).rejects.toThrow('used after it ended');
    await expect(flag(held!, 'direct-4')).rejects.toThrow('used after it ended');
    await batcher.run('k', (trx) => flagShape(trx, { name: 'direct-5', at }));
    expect(await directNames()).toEqual(['direct-3', 'direct-5']);
  });
});
