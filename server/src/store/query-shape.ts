import type { Compilable, CompiledQuery, Insertable } from 'kysely';
import type { Database, Db } from '../database.js';

/** A value a shape leaves open, bound at each run. */
class Slot {
  constructor(readonly name: string) {}
}

interface Template<I> {
  compiled: CompiledQuery;
  /** Per parameter: how a run's input gives it (a slot's value, or a constant of the shape). */
  readers: ((input: I) => unknown)[];
}

/** How a run's input gives the value of a slot: by default, the input's property of that name. */
type SlotReader<I> = (slot: string) => (input: I) => unknown;

const byName: SlotReader<object> = (slot) => (input) => (input as Record<string, unknown>)[slot];

/** Each compiled shape's SQL by a name of its own, to be prepared under (see {@link preparedNameOf}). */
const shapeNames = new Map<string, string>();

/**
 * The name PostgreSQL prepares a shape's statement under, once per connection (see `openPostgres`):
 * parsed and planned at every run, a statement cost 60 to 100 µs more a round trip. A shape that reads
 * `*` has none: its columns would be those of the table when it was prepared, and PostgreSQL refuses
 * such a statement once a migration changes them (another node's, in a rolling deploy).
 */
export const preparedNameOf = (sql: string): string | undefined => shapeNames.get(sql);

function nameShape(sql: string): void {
  if (!sql.includes('*') && !shapeNames.has(sql)) shapeNames.set(sql, `shape_${shapeNames.size + 1}`);
}

/** Runs a compiled statement at once on the connection a transaction holds, and gives its rows. */
export type DirectRun = (sql: string, parameters: readonly unknown[]) => unknown[];

/** The Kysely instances whose compiled shapes run straight on their connection (see {@link runsDirectly}). */
const direct = new WeakMap<Db, DirectRun>();

/**
 * From now on, the shapes run on `db` go straight to its connection through `run`, without Kysely's
 * executor (a chain of promises per statement). Only for a Kysely used solely while it holds
 * SQLite's one connection (a write batch's, see `sqliteConnection`): nothing else runs there meanwhile.
 */
export function runsDirectly(db: Db, run: DirectRun): void {
  direct.set(db, run);
}

/**
 * A query built and compiled once per dialect, then run with new values. On the hot paths,
 * building a Kysely query and compiling it costs more than SQLite takes to run it (its builder
 * and compiler were ~12% of the service's CPU under turn load, `npm run bench -- throughput`
 * with `BENCH_CPU_PROF`); the SQL text and its statement are reused, only the values change.
 *
 * `build` gets stand-ins for the values: it must use them only as values (not in JavaScript
 * conditions), so that every run has the same SQL. Anything that changes the SQL (a number of
 * rows, which columns) belongs in the shape's key: see {@link queryShapes}. `read` says where a
 * run's input holds each value, when not in a property of the stand-in's name.
 */
export function queryShape<V extends object, R, I = V>(
  build: (db: Db, values: V) => Compilable<R>,
  read: SlotReader<I> = byName as SlotReader<I>,
): (db: Db, input: I) => Promise<R[]> {
  // A test process may hold a SQLite and a PostgreSQL store at once: one template per dialect.
  const templates = new Map<unknown, Template<I>>();
  const standIns = new Proxy({}, { get: (_, name) => new Slot(String(name)) }) as V;
  return async (db, input) => {
    const adapter = db.getExecutor().adapter.constructor;
    let template = templates.get(adapter);
    if (!template) {
      const compiled = build(db, standIns).compile();
      template = {
        compiled,
        readers: compiled.parameters.map((p) => (p instanceof Slot ? read(p.name) : () => p)),
      };
      templates.set(adapter, template);
      nameShape(compiled.sql);
    }
    const parameters = template.readers.map((value) => value(input));
    const run = direct.get(db);
    if (run) return run(template.compiled.sql, parameters) as R[];
    return (await db.executeQuery<R>({ ...template.compiled, parameters })).rows;
  };
}

/**
 * A family of shapes chosen by a key (how many rows, which columns, which filters), each built on
 * first use. The key is typed: `build` reads its fields, never a string it must parse. Keys are
 * told apart by their JSON, so each kind of key must be built with its fields in one order.
 */
export function queryShapes<K extends string | object, V extends object, R, I = V>(
  build: (key: K) => (db: Db, values: V) => Compilable<R>,
  read?: SlotReader<I>,
): (key: K, db: Db, input: I) => Promise<R[]> {
  const shapes = new Map<string, (db: Db, input: I) => Promise<R[]>>();
  return (key, db, input) => {
    const name = typeof key === 'string' ? key : JSON.stringify(key);
    let shape = shapes.get(name);
    if (!shape) shapes.set(name, (shape = queryShape(build(key), read)));
    return shape(db, input);
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
  type Row = Record<string, unknown>;
  const shapes = queryShapes(
    ({ count, columns }: { count: number; columns: readonly string[] }) =>
      (db, v: Row) => {
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
    // A slot `row:column` reads that row's column: the rows are bound as they are, not copied into names.
    (slot): ((rows: readonly Row[]) => unknown) => {
      const at = slot.indexOf(':');
      const row = Number(slot.slice(0, at));
      const column = slot.slice(at + 1);
      return (rows) => rows[row]![column];
    },
  );
  return async (db, rows) => {
    if (!rows.length) return;
    const columns = Object.keys(rows[0]!).sort();
    await shapes({ count: rows.length, columns }, db, rows as readonly Row[]);
  };
}
