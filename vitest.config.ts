import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['server/**/*.test.ts', 'widget/**/*.test.ts', 'console/**/*.test.ts', 'demo/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default', './server/test/summary-reporter.ts'],
  },
});
