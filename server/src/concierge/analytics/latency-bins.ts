/**
 * Latencies are kept as counts per bin, each bin 10% wider than the one before, so any range's
 * percentiles come from a few hundred numbers instead of every measurement: a percentile is the
 * geometric middle of its bin, within 5% of the exact value.
 */
const GROWTH = 1.1;

/** The bin of a latency in ms (0 for anything under 1 ms). */
export const binOf = (ms: number): number => (ms < 1 ? 0 : 1 + Math.floor(Math.log(ms) / Math.log(GROWTH)));

/** A bin's middle, in ms, rounded. */
export const middleOf = (bin: number): number => (bin === 0 ? 0 : Math.round(GROWTH ** (bin - 1) * Math.sqrt(GROWTH)));

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  count: number;
}

/** p50 and p95 (nearest rank) of the measurements counted in `bins` (bin → count); null without any. */
export function percentilesOf(bins: ReadonlyMap<number, number>): Percentiles {
  const sorted = [...bins].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
  const count = sorted.reduce((sum, [, n]) => sum + n, 0);
  const at = (q: number): number | null => {
    if (!count) return null;
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (const [bin, n] of sorted) if ((seen += n) >= rank) return middleOf(bin);
    return null;
  };
  return { p50: at(0.5), p95: at(0.95), count };
}
