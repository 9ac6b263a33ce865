import { PostgresAdapter, type RawBuilder, sql } from 'kysely';
import type { Db } from '../database.js';

/**
 * How a wire field is read from its column of the same name: as is, as stored JSON text, or
 * as a 0/1 integer flag (booleans are integers so one schema serves both dialects).
 */
export type FieldKind = 'value' | 'json' | 'flag';
export type Shape = Readonly<Record<string, FieldKind>>;

/** One row to its wire object, in JavaScript: for single rows. */
export function shapeRow<T>(shape: Shape, row: object): T {
  const columns = row as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [field, kind] of Object.entries(shape)) {
    const value = columns[field];
    if (kind === 'json') out[field] = value === null ? null : JSON.parse(value as string);
    else if (kind === 'flag') out[field] = value === 1;
    else out[field] = value;
  }
  return out as T;
}

const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * Concatenated rather than json_object(): stored JSON text is spliced in as written (it was
 * written by JSON.stringify), where json() would parse and re-print it on every read.
 */
function objectSql(pg: boolean, shape: Shape): string {
  const parts = Object.entries(shape).map(([field, kind]) => {
    // Field names come from our own shapes, never from requests; the check keeps it that way.
    if (!IDENTIFIER.test(field)) throw new Error(`Not a column name: ${field}`);
    const value =
      kind === 'json'
        ? `coalesce(${field}, 'null')`
        : kind === 'flag'
          ? `case when ${field} = 1 then 'true' else 'false' end`
          : pg
            ? `coalesce(to_json(${field})::text, 'null')`
            : `json_quote(${field})`;
    return `'"${field}":', ${value}`;
  });
  // One concat() call writes the object in one pass; a chain of || copied the growing text at each step.
  return `concat('{', ${parts.join(", ',', ")}, '}')`;
}

// Built once per shape and dialect: as one raw fragment it costs Kysely nothing to compile.
const compiled = { pg: new WeakMap<Shape, string>(), sqlite: new WeakMap<Shape, string>() };

/**
 * Each row of a query as its wire object's JSON text, built by the database: a page handed to
 * the wire this way skips materialising rows as objects and re-serialising their stored JSON,
 * which was most of the cost of a 20-row page on SQLite.
 */
export function jsonRowOf(db: Db, shape: Shape): RawBuilder<string> {
  const pg = isPostgres(db);
  const cache = pg ? compiled.pg : compiled.sqlite;
  let text = cache.get(shape);
  if (text === undefined) cache.set(shape, (text = objectSql(pg, shape)));
  return sql.raw<string>(text);
}

/** Rows' JSON texts (from {@link jsonRowOf}) as one JSON array text. */
export const jsonArrayText = (items: readonly string[]): string => `[${items.join(',')}]`;
