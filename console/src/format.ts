// Times and durations as the console shows them.

/** 1234 → "1.2 s"; 87 → "87 ms". */
export const duration = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** A timestamp for people, in their time zone, to the second. */
export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '—';

/** A local day (`2026-11-24`, from a date input) as the instant it starts, `plusDays` later; empty stays empty. */
export function startOfDay(day: string, plusDays = 0): string {
  if (!day) return '';
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y!, m! - 1, d! + plusDays).toISOString();
}
