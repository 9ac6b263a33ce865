import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { WIDGET_BUNDLE } from '../server/src/widget.route.js';

/** The bundle, Preact included, must stay within 14 KB gzip: every host page pays for it. */
const LIMIT_BYTES = 14 * 1024;
const size = gzipSync(readFileSync(WIDGET_BUNDLE), { level: 9 }).length;
const line = `widget bundle: ${(size / 1024).toFixed(2)} KB gzip (limit ${LIMIT_BYTES / 1024} KB)`;
if (size > LIMIT_BYTES) {
  process.stderr.write(`${line}: TOO LARGE\n`);
  process.exit(1);
}
process.stdout.write(`${line}\n`);
