import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** One row of numbers in a chart: its name, a value per bucket (null where there is none), and how it is drawn. */
export interface Series {
  name: string;
  values: (number | null)[];
  tone: 'main' | 'bad' | 'alt' | 'warn';
}

const HEIGHT = 220;
/** The colour of each tone, from the console's own palette (light or dark). */
const TONES: Record<Series['tone'], string> = { main: '--accent', bad: '--bad', alt: '--ok', warn: '--warn' };
/** Steps between a count axis's ticks: whole numbers only. */
const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];

/**
 * A time series chart drawn by uPlot (README, The console): a UTC date or hour axis, a value axis
 * in the series' unit, each bucket's numbers in the legend as the pointer moves over it (the last
 * bucket's when it is elsewhere), and the same numbers as a table that screen readers read instead.
 */
export function TimeChart({
  title,
  starts,
  labels,
  series,
  unit = '',
}: {
  title: string;
  /** Each bucket's start (ISO). */
  starts: string[];
  /** Each bucket as a reader names it: its day, or its day and hour. */
  labels: string[];
  series: Series[];
  unit?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const number = (v: number | null | undefined) =>
    v === null || v === undefined ? '—' : `${v.toLocaleString()}${unit}`;
  useEffect(() => {
    // uPlot is fetched with the first chart: the console's other pages never load it.
    const el = box.current!;
    let plot: uPlot | undefined;
    let resized: ResizeObserver | undefined;
    let gone = false;
    void import('uplot').then(({ default: Plot }) => {
      if (gone) return;
      const drawn = (plot = draw(Plot, el));
      drawn.setLegend({ idx: starts.length - 1 });
      resized = new ResizeObserver(() => gone || drawn.setSize({ width: el.clientWidth, height: HEIGHT }));
      resized.observe(el);
    });
    return () => {
      gone = true;
      resized?.disconnect();
      plot?.destroy();
    };
  }, [starts, series, unit]);

  function draw(Plot: typeof uPlot, el: HTMLElement): uPlot {
    const style = getComputedStyle(el);
    const colour = (name: string) => style.getPropertyValue(name).trim();
    const text = colour('--muted');
    const line = colour('--line');
    const axis = { stroke: text, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
    const xs = starts.map((s) => Date.parse(s) / 1000);
    return new Plot(
      {
        width: el.clientWidth,
        height: HEIGHT,
        // The buckets are UTC days and hours: so is the axis, whatever the browser's zone.
        tzDate: (ts) => Plot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { y: { range: (_u, _min, max) => [0, Math.max(unit ? 10 : 4, max * 1.1)] } },
        axes: [
          axis,
          {
            ...axis,
            size: 64,
            values: (_u, ticks) => ticks.map((v) => number(v)),
            ...(unit ? {} : { incrs: COUNT_STEPS }),
          },
        ],
        series: [
          { label: 'UTC', value: (_u, v) => labels[xs.indexOf(v)] ?? '—' },
          ...series.map((s) => ({
            label: s.name,
            stroke: colour(TONES[s.tone]),
            width: 2,
            points: { show: true, size: 6 },
            value: (_u: uPlot, v: number | null) => number(v),
          })),
        ],
        cursor: { drag: { x: false, y: false } },
        legend: { live: true },
        // Away from the pointer the legend reads the last bucket, never a row of dashes.
        hooks: { setCursor: [(u) => u.cursor.idx == null && u.setLegend({ idx: xs.length - 1 })] },
      },
      [xs, ...series.map((s) => s.values)],
      el,
    );
  }
  const highest = series
    .map((s) => `${s.name} ${number(s.values.reduce<number>((a, v) => Math.max(a, v ?? 0), 0))} at most`)
    .join(', ');
  return (
    <figure class="chart">
      <figcaption>
        <strong>{title}</strong>{' '}
        <span class="muted">
          {labels[0]} to {labels.at(-1)} (UTC)
        </span>
      </figcaption>
      <div ref={box} class="plot" role="img" aria-label={`${title}: ${highest}`} />
      <table class="sr-only">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">Period</th>
            {series.map((s) => (
              <th key={s.name} scope="col">
                {s.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {labels.map((label, i) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              {series.map((s) => (
                <td key={s.name}>{number(s.values[i])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
