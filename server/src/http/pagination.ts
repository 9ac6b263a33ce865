import { z } from 'zod';
import type { Page } from '../store/page.js';
import type { PageMeta } from './envelope.js';

const positiveInt = (max?: number) => {
  let n = z.coerce.number().int().min(1);
  if (max !== undefined) n = n.max(max);
  return n;
};

/** Out-of-range or non-integer values are refused, never clamped. */
export const pageQuery = z.object({
  page: positiveInt().default(1).meta({ description: 'Page number, from 1' }),
  per_page: positiveInt(100).default(20).meta({ description: 'Items per page, 1..100' }),
});

export type { Page } from '../store/page.js';

export function pageMeta(p: Page, totalCount: number): PageMeta {
  return {
    page: p.page,
    per_page: p.per_page,
    total_count: totalCount,
    total_pages: Math.ceil(totalCount / p.per_page),
  };
}

/** A list response: a page of rows as the API shows them, and the page's meta. */
export function pageOf<R, T>(
  p: Page,
  listed: { rows: R[]; total: number },
  toItem: (row: R) => T,
): { data: T[]; meta: PageMeta } {
  return { data: listed.rows.map(toItem), meta: pageMeta(p, listed.total) };
}
