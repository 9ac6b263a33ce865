import { configDefaults, defineConfig } from 'vitest/config';
import base, { TIMED_SUITES } from './vitest.config.js';

/** The suites that time the service (see TIMED_SUITES), one file at a time, after the others (npm test). */
export default defineConfig({
  ...base,
  test: { ...base.test, include: TIMED_SUITES, exclude: [...configDefaults.exclude], maxWorkers: 1 },
});
