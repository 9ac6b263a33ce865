/** The q-quantile (0..1) of samples, by the nearest-rank method. */
export function quantile(samples: readonly number[], q: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** A median and a 95th percentile, of the same unit as the samples. */
export interface Spread {
  p50: number;
  p95: number;
}

export const spread = (samples: readonly number[]): Spread => ({
  p50: quantile(samples, 0.5),
  p95: quantile(samples, 0.95),
});

export interface Row {
  [column: string]: string | number;
}

/** Prints rows as an aligned table; numbers right-aligned with the given decimals. */
export function printTable(title: string, rows: readonly Row[], decimals: Record<string, number> = {}): void {
  const columns = Object.keys(rows[0] ?? {});
  const cell = (row: Row, c: string) => {
    const v = row[c]!;
    return typeof v === 'number' ? v.toFixed(decimals[c] ?? 0) : v;
  };
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)));
  const line = (values: string[]) =>
    values.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}`);
  console.log(line(columns));
  for (const row of rows) console.log(line(columns.map((c) => cell(row, c))));
}

export const microseconds = (ms: number): number => ms * 1000;
