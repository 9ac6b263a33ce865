import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../database.js';
import { openStore, type Store } from './db.js';
import { WriteBatcher } from './write-batcher.js';
import { type DirectRun, queryShape } from './query-shape.js';

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

  it("runs a batch's compiled shapes straight on the connection with `direct`, and nothing outside the batch", async () => {
    const flagShape = queryShape((db, v: { name: string; at: string }) =>
      db.insertInto('service_flags').values({ name: v.name, created_at: v.at }),
    );
    const ran: string[] = [];
    const direct: DirectRun = (sql, parameters) => {
      ran.push(String(parameters[0]));
      return store.direct!(sql, parameters);
    };
    const batcher = new WriteBatcher(store.db, { direct });
    const at = new Date().toISOString();
    let held: Db | undefined;
    await batcher.run('k', async (trx) => {
      held = trx;
      await flagShape(trx, { name: 'direct-1', at });
    });
    await flagShape(store.db, { name: 'direct-2', at });
    // The batch is over: its transaction no longer runs anything directly (Kysely refuses it instead).
    await expect(flagShape(held!, { name: 'direct-3', at })).rejects.toThrow();
    expect(ran).toEqual(['direct-1']);
    expect((await names()).filter((n) => n.startsWith('direct-'))).toEqual(['direct-1', 'direct-2']);
  });
});
