// Loaded with `--import` into a service process when BENCH_SQL_PROFILE is set (plain JavaScript:
// the compiled service runs without tsx). Times every SQLite statement by its SQL text and, when
// the process stops, prints the statements that took the most time in all to stderr.
import { createRequire } from 'node:module';

const SQLite = createRequire(import.meta.url)('better-sqlite3');
const totals = new Map();
const prepare = SQLite.prototype.prepare;
SQLite.prototype.prepare = function (text) {
  const statement = prepare.call(this, text);
  for (const method of ['run', 'get', 'all']) {
    const original = statement[method];
    statement[method] = function (...args) {
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const entry = totals.get(text) ?? { count: 0, ms: 0, samples: [] };
        const ms = performance.now() - started;
        entry.count++;
        entry.ms += ms;
        // Medians too: a mean hides whether a statement is slow or only sometimes very slow.
        if (entry.samples.length < 50_000) entry.samples.push(ms);
        totals.set(text, entry);
      }
    };
  }
  return statement;
};

process.once('SIGTERM', () => {
  const rows = [...totals].sort((a, b) => b[1].ms - a[1].ms);
  const all = rows.reduce((sum, [, e]) => sum + e.ms, 0);
  const median = (samples) => samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)];
  const lines = rows
    .slice(0, 20)
    .map(
      ([sql, e]) =>
        `${e.ms.toFixed(0).padStart(7)} ms ${String(e.count).padStart(8)}× mean ${((1000 * e.ms) / e.count).toFixed(1).padStart(7)} µs  p50 ${(1000 * median(e.samples)).toFixed(1).padStart(7)} µs  ${sql.replace(/\s+/g, ' ').slice(0, 120)}`,
    );
  process.stderr.write(`\nSQLite statements of pid ${process.pid}: ${all.toFixed(0)} ms in all\n${lines.join('\n')}\n`);
});
