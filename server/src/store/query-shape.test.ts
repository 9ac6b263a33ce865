import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../database.js';
import { describeEachStore, type StoreKind, startService, type TestService } from '../../test/harness.js';
import { queryShape, queryShapes, runsDirectly } from './query-shape.js';

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

  it.runIf(kind === 'postgres')(
    'on PostgreSQL prepares a shape once per connection under its name, but not one that reads *',
    async () => {
      const db = service.app.store.db;
      const starred = queryShape((q, v: { name: string }) =>
        q.selectFrom('service_flags').selectAll().where('name', '=', v.name),
      );
      const prepared = await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 3; i++) await flagsBefore(trx, { before: '2026-01-03T00:00:00.000Z' });
        await starred(trx, { name: 'shape-a' });
        const { rows } = await sql<{
          name: string;
          statement: string;
        }>`select name, statement from pg_prepared_statements`.execute(trx);
        return rows;
      });
      const sqlOf = (shape: 'flags' | 'starred') =>
        prepared.filter((r) => r.statement.includes(shape === 'flags' ? 'like' : '*'));
      expect(sqlOf('flags')).toHaveLength(1);
      expect(sqlOf('flags')[0]!.name).toMatch(/^shape_\d+$/);
      expect(sqlOf('starred')).toEqual([]);
      // A column added under a prepared statement that names its columns leaves it working (a rolling deploy's migration).
      await sql`alter table service_flags add column shape_test_extra text`.execute(db);
      try {
        await db.transaction().execute(async (trx) => {
          await flagsBefore(trx, { before: '2026-01-03T00:00:00.000Z' });
          expect(await flagsBefore(trx, { before: '2026-01-02T00:00:00.000Z' })).toEqual([
            { name: 'shape-a2', created_at: '2026-01-01T00:00:00.000Z' },
          ]);
        });
      } finally {
        await sql`alter table service_flags drop column shape_test_extra`.execute(db);
      }
    },
  );
}

describeEachStore('query shapes', suite);

describe('a shape on a Kysely that runs directly', () => {
  it('goes to the registered run with its SQL and values, and a shape on another Kysely does not', async () => {
    const database = new SQLite(':memory:');
    database.exec('create table service_flags (name text primary key, created_at text not null)');
    const dialect = () => new SqliteDialect({ database });
    const through = new Kysely<Database>({ dialect: dialect() });
    const direct = new Kysely<Database>({ dialect: dialect() });
    const ran: [string, unknown[]][] = [];
    runsDirectly(direct, (text, parameters) => {
      ran.push([text, [...parameters]]);
      return database.prepare(text).all(parameters);
    });
    try {
      await setFlag(through, { name: 'shape-x', at: '2026-01-01T00:00:00.000Z' });
      expect(ran).toEqual([]);
      expect(await flagsBefore(direct, { before: '2026-01-02T00:00:00.000Z' })).toEqual([
        { name: 'shape-x', created_at: '2026-01-01T00:00:00.000Z' },
      ]);
      expect(ran).toEqual([[expect.stringContaining('from "service_flags"'), ['2026-01-02T00:00:00.000Z', 'shape-%']]]);
    } finally {
      database.close();
    }
  });
});
