import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './service-process.js';

it('counts a file that failed to load and the tests of a suite whose setup failed as failed', () => {
  const run = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/vitest/vitest.mjs'),
      'run',
      '--config',
      join(import.meta.dirname, 'summary-fixtures/vitest.config.ts'),
    ],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', TEST_DATABASE_URL: '' },
    },
  );
  expect(run.status).toBe(1);
  // passed: the one test that runs; failed: two stranded by their setup, the file that never loaded, the failing test.
  expect(run.stdout).toContain('Tests: 1 passed, 4 failed, 2 skipped\n');
  // Of the two skipped, the one on PostgreSQL is named, with what would run it.
  expect(run.stdout).toContain(
    'Skipped: 1 of them need PostgreSQL; set TEST_DATABASE_URL=postgres://USER@HOST:5432/DB to run them (CI does).\n',
  );
}, 30_000);
