import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIR } from './server/src/console/console-static.js';
import { WIDGET_BUNDLE } from './server/src/widget.route.js';

const gzipped = (file: string): number => gzipSync(readFileSync(file), { level: 9 }).length;

/**
 * Budgets, Preact included: the widget within 14 KB gzip (every host page pays for it), the
 * console's JavaScript within 60 KB (its first page must be interactive at once).
 */
const budgets = [
  { name: 'widget bundle', bytes: gzipped(WIDGET_BUNDLE), limit: 14 * 1024 },
  {
    name: 'console JavaScript',
    bytes: readdirSync(join(CONSOLE_DIR, 'assets'))
      .filter((f) => f.endsWith('.js'))
      .reduce((sum, f) => sum + gzipped(join(CONSOLE_DIR, 'assets', f)), 0),
    limit: 60 * 1024,
  },
];
let over = false;
for (const { name, bytes, limit } of budgets) {
  const line = `${name}: ${(bytes / 1024).toFixed(2)} KB gzip (limit ${limit / 1024} KB)`;
  if (bytes > limit) over = true;
  (bytes > limit ? process.stderr : process.stdout).write(`${line}${bytes > limit ? ': TOO LARGE' : ''}\n`);
}
if (over) process.exit(1);
