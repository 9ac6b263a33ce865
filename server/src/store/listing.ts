/** Which page of a list, counted from 1 (the API's `page` and `per_page`). */
interface PageWanted {
  page: number;
  per_page: number;
}

/** How many rows come before the page. */
export const offsetOf = (p: PageWanted): number => (p.page - 1) * p.per_page;

/** One page of a list's rows, and how many rows its filter matches in all. */
export interface Listed<R> {
  rows: R[];
  total: number;
}

/** A query that can be cut to one page: a Kysely select. */
interface Pageable<R> {
  limit(limit: number): { offset(offset: number): { execute(): Promise<R[]> } };
}

/** A Kysely select of one row: how many rows the filter matches, as `total`. */
interface Counting {
  executeTakeFirstOrThrow(): Promise<{ total: number | string | bigint }>;
}

/** Reads a page of `rows` and the `total` its filter matches, at once. */
export async function listed<R>(page: PageWanted, rows: Pageable<R>, counting: Counting): Promise<Listed<R>> {
  const [found, count] = await Promise.all([
    rows.limit(page.per_page).offset(offsetOf(page)).execute(),
    counting.executeTakeFirstOrThrow(),
  ]);
  return { rows: found, total: Number(count.total) };
}

/** `text` as a LIKE pattern matching it anywhere, its wildcards escaped (with `\`). */
export const containing = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
