import { defineConfig } from 'vitest/config';

/** Runs the fixtures with only the summary reporter (see summary-reporter.test.ts). */
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['*.fixture.ts'],
    reporters: ['../summary-reporter.ts'],
  },
});
