import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { readCatalogue } from './widget/catalogue.js';

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
