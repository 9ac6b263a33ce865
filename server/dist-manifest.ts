import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes `dist/package.json` after `tsc -p tsconfig.build.json`: the compiled service resolves the
 * project's `#protocol/*` imports to the compiled files beside it, as the sources resolve them to
 * the `.ts` files (README, Layout). It has no name, so the compiled code still finds the project's
 * own root above it (server/src/shared/project-root.ts).
 */
const root = join(import.meta.dirname, '..');
const { imports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  imports: Record<string, string>;
};
const compiled = Object.fromEntries(
  Object.entries(imports).map(([specifier, target]) => [specifier, target.replace(/\.ts$/, '.js')]),
);
writeFileSync(
  join(root, 'dist', 'package.json'),
  `${JSON.stringify({ private: true, type: 'module', imports: compiled }, null, 2)}\n`,
);
