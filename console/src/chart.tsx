/** One row of numbers in a chart: its name, a value per bucket (null where there is none), and how it is drawn. */
export interface Series {
  name: string;
  values: (number | null)[];
  tone: 'main' | 'bad' | 'alt';
}

const BAR = 12;

/**
 * Bars per bucket, a series beside the other, drawn as SVG (a named image whose bars say their
 * numbers on hover), and the same numbers as a table that screen readers read instead.
 */
export function BarChart({
  title,
  labels,
  series,
  unit = '',
}: {
  title: string;
  labels: string[];
  series: Series[];
  unit?: string;
}) {
  const max = Math.max(1, ...series.flatMap((s) => s.values.map((v) => v ?? 0)));
  const group = BAR * series.length + 4;
  const number = (v: number | null) => (v === null ? '—' : `${v.toLocaleString()}${unit}`);
  const totals = series
    .map((s) => `${s.name} ${number(s.values.reduce<number>((a, v) => Math.max(a, v ?? 0), 0))} at most`)
    .join(', ');
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${Math.max(1, labels.length) * group} 100`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`${title}: ${totals}`}
      >
        {labels.map((label, i) => (
          <g key={label}>
            <title>{`${label}: ${series.map((s) => `${s.name} ${number(s.values[i] ?? null)}`).join(', ')}`}</title>
            {series.map((s, j) => {
              const h = ((s.values[i] ?? 0) / max) * 100;
              return (
                <rect
                  key={s.name}
                  class={`bar bar-${s.tone}`}
                  x={i * group + 2 + j * BAR}
                  y={100 - h}
                  width={BAR - 2}
                  height={h}
                />
              );
            })}
          </g>
        ))}
      </svg>
      <figcaption>
        {title}, {labels[0]} to {labels.at(-1)}
        {series.length > 1 && (
          <span class="legend">
            {series.map((s) => (
              <span key={s.name} class={`key key-${s.tone}`}>
                {s.name}
              </span>
            ))}
          </span>
        )}
      </figcaption>
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
                <td key={s.name}>{number(s.values[i] ?? null)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
