import type { Compilable, CompiledQuery, Insertable } from 'kysely';
import type { Database, Db } from '../database.js';

/** A value a shape leaves open, bound at each run. */
class Slot {
  constructor(readonly name: string) {}
}

interface Template {
  compiled: CompiledQuery;
  /** Per parameter: the name of the value bound there, or a constant of the shape. */
  bindings: ({ slot: string } | { constant: unknown })[];
}

/**
 * A query built and compiled once per dialect, then run with new values. On the hot paths,
 * building a Kysely query and compiling it costs more than SQLite takes to run it (its builder
 * and compiler were ~12% of the service's CPU under turn load, `npm run bench -- throughput`
 * with `BENCH_CPU_PROF`); the SQL text and its statement are reused, only the values change.
 *
 * `build` gets stand-ins for the values: it must use them only as values (not in JavaScript
 * conditions), so that every run has the same SQL. Anything that changes the SQL (a number of
 * rows, which columns) belongs in the shape's key: see {@link queryShapes}.
 */
export function queryShape<V extends object, R>(
  build: (db: Db, values: V) => Compilable<R>,
): (db: Db, values: V) => Promise<R[]> {
  // A test process may hold a SQLite and a PostgreSQL store at once: one template per dialect.
  const templates = new Map<unknown, Template>();
  const standIns = new Proxy({}, { get: (_, name) => new Slot(String(name)) }) as V;
  return async (db, values) => {
    const adapter = db.getExecutor().adapter.constructor;
    let template = templates.get(adapter);
    if (!template) {
      const compiled = build(db, standIns).compile();
      template = {
        compiled,
        bindings: compiled.parameters.map((p) => (p instanceof Slot ? { slot: p.name } : { constant: p })),
      };
      templates.set(adapter, template);
    }
    const parameters = template.bindings.map((b) =>
      'slot' in b ? (values as Record<string, unknown>)[b.slot] : b.constant,
    );
    return (await db.executeQuery<R>({ ...template.compiled, parameters })).rows;
  };
}

/**
 * A family of shapes chosen by a key (how many rows, which columns, which filters), each built on
 * first use. The key is typed: `build` reads its fields, never a string it must parse. Keys are
 * told apart by their JSON, so each kind of key must be built with its fields in one order.
 */
export function queryShapes<K extends string | object, V extends object, R>(
  build: (key: K) => (db: Db, values: V) => Compilable<R>,
): (key: K, db: Db, values: V) => Promise<R[]> {
  const shapes = new Map<string, (db: Db, values: V) => Promise<R[]>>();
  return (key, db, values) => {
    const name = typeof key === 'string' ? key : JSON.stringify(key);
    let shape = shapes.get(name);
    if (!shape) shapes.set(name, (shape = queryShape(build(key))));
    return shape(db, values);
  };
}

/**
 * What an insert does with a row whose `key` is taken: nothing (no `add`), or add its `add`
 * columns to the stored row's (a count kept by upserts).
 */
export interface OnConflict {
  key: readonly string[];
  add?: readonly string[];
}

/**
 * Inserts rows into `table` through one compiled shape per number of rows and set of columns
 * (the columns of the first row; every row must have the same), handling a taken key as
 * `conflict` says.
 */
export function rowInserter<T extends keyof Database & string>(
  table: T,
  conflict?: OnConflict,
): (db: Db, rows: readonly Insertable<Database[T]>[]) => Promise<void> {
  const shapes = queryShapes(
    ({ count, columns }: { count: number; columns: readonly string[] }) =>
      (db, v: Record<string, unknown>) => {
        const insert = db
          .insertInto(table)
          .values(
            Array.from({ length: count }, (_, i) =>
              Object.fromEntries(columns.map((c) => [c, v[`${i}:${c}`]])),
            ) as never,
          );
        if (!conflict) return insert;
        const { key, add = [] } = conflict;
        return insert.onConflict((oc) =>
          add.length
            ? oc
                .columns(key as never)
                .doUpdateSet(
                  (eb) =>
                    Object.fromEntries(
                      add.map((c) => [c, eb(eb.ref(`${table}.${c}` as never), '+', eb.ref(`excluded.${c}` as never))]),
                    ) as never,
                )
            : oc.doNothing(),
        );
      },
  );
  return async (db, rows) => {
    if (!rows.length) return;
    const columns = Object.keys(rows[0]!).sort();
    const values: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const c of columns) values[`${i}:${c}`] = (row as Record<string, unknown>)[c];
    });
    await shapes({ count: rows.length, columns }, db, values);
  };
}
