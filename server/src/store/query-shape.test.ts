import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore, type StoreKind, startService, type TestService } from '../../test/harness.js';
import { queryShape, queryShapes } from './query-shape.js';

const setFlag = queryShape((db, v: { name: string; at: string }) =>
  db.insertInto('service_flags').values({ name: v.name, created_at: v.at }),
);
const flagsBefore = queryShape((db, v: { before: string }) =>
  db
    .selectFrom('service_flags')
    .select(['name', 'created_at'])
    .where('created_at', '<', v.before)
    .where('name', 'like', 'shape-%')
    .orderBy('name'),
);
const renamed = queryShapes(
  (key) => (db, v: { from: string; to: string }) =>
    db
      .updateTable('service_flags')
      .set({ name: key === 'upper' ? sql<string>`upper(${v.to})` : v.to })
      .where('name', '=', v.from)
      .returning('name'),
);

function suite(kind: StoreKind) {
  let service: TestService;
  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(async () => service?.close());

  it('runs one compiled query with new values each time, as the builder would have', async () => {
    const db = service.app.store.db;
    await setFlag(db, { name: 'shape-b', at: '2026-01-02T00:00:00.000Z' });
    await setFlag(db, { name: 'shape-a', at: '2026-01-01T00:00:00.000Z' });
    await setFlag(db, { name: 'shape-c', at: '2026-01-03T00:00:00.000Z' });
    expect(await flagsBefore(db, { before: '2026-01-03T00:00:00.000Z' })).toEqual([
      { name: 'shape-a', created_at: '2026-01-01T00:00:00.000Z' },
      { name: 'shape-b', created_at: '2026-01-02T00:00:00.000Z' },
    ]);
    expect(await flagsBefore(db, { before: '2026-01-02T00:00:00.000Z' })).toEqual([
      { name: 'shape-a', created_at: '2026-01-01T00:00:00.000Z' },
    ]);
  });

  it('runs in a transaction, and keeps one shape per key', async () => {
    const db = service.app.store.db;
    await db.transaction().execute(async (trx) => {
      expect(await renamed('plain', trx, { from: 'shape-a', to: 'shape-a2' })).toEqual([{ name: 'shape-a2' }]);
    });
    // The 'upper' shape built its own SQL: its key decided the JavaScript, not the values.
    expect(await renamed('upper', db, { from: 'shape-b', to: 'shape-b2' })).toEqual([
      { name: 'shape-b2'.toUpperCase() },
    ]);
    expect(await renamed('plain', db, { from: 'absent', to: 'x' })).toEqual([]);
  });
}

describeEachStore('query shapes', suite);
