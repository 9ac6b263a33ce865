import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project root: the same from `server/src` under tsx and from `dist/server/src` when compiled. */
function projectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

export const PROJECT_ROOT = projectRoot(import.meta.dirname);
