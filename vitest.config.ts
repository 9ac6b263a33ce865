import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { readCatalogue } from './widget/catalogue.js';

/**
 * Files whose tests time the service (a loop kept responsive, hook calls kept on time, hashing
 * floods, a fuzzer's deadline): run by vitest.timed.config.ts on their own after the rest, since two
 * cores shared with three other files make them measure the neighbours instead.
 */
export const TIMED_SUITES = [
  'server/src/console/sign-in-limits.test.ts',
  'server/src/console/console.test.ts',
  'server/src/knowledge/knowledge-hostile.test.ts',
  'server/src/fuzz.test.ts',
];

export default defineConfig({
  // As the widget's build defines it (widget/vite.config.ts).
  define: {
    __CATALOGUE_VERSION__: JSON.stringify(readCatalogue(join(import.meta.dirname, 'widget', 'locales')).version),
  },
  test: {
    include: [
      'server/**/*.test.ts',
      'protocol/**/*.test.ts',
      'widget/**/*.test.ts',
      'console/**/*.test.ts',
      'demo/**/*.test.ts',
      'sdk/**/*.test.ts',
    ],
    exclude: [...configDefaults.exclude, ...TIMED_SUITES],
    pool: 'forks',
    // Most files wait on real servers, sockets and timers, not the CPU: on CI's two cores three at a
    // time keep them busy (1.6 cores used; 256 s against 315 s for two at a time); each file has its
    // own store or schema.
    maxWorkers: 3,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default', './server/test/summary-reporter.ts'],
  },
});
