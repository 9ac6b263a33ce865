import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The project root: the same from `server/src` under tsx and from `dist/server/src` when compiled,
 * past the nameless package.json the build writes into `dist/` (server/dist-manifest.ts).
 */
function projectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (namedPackage(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

export const PROJECT_ROOT = projectRoot(import.meta.dirname);

function namedPackage(file: string): boolean {
  return existsSync(file) && typeof (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'string';
}
