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
      'widget/**/*.test.ts',
      'console/**/*.test.ts',
      'demo/**/*.test.ts',
      'sdk/**/*.test.ts',
    ],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default', './server/test/summary-reporter.ts'],
  },
});
