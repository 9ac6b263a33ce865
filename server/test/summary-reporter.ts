import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain `N passed, N failed, N skipped` line that any CI can read. A file
 * that failed to load counts as one failed test, and the tests of a suite whose hooks failed
 * (Vitest marks them skipped) count as failed: a summary must never read "0 failed" for a run
 * that failed. Tests skipped for want of PostgreSQL are counted apart, with how to run them.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    let needPostgres = 0;
    for (const module of testModules) {
      const broken = [module, ...module.children.allSuites()].filter((part) => part.errors().length > 0);
      const stranded = new Set(
        broken
          .flatMap((part) => [...part.children.allTests()])
          .filter((test) => test.options.mode === 'run' || test.options.mode === 'only'),
      );
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed' || stranded.has(test)) failedHere++;
        else {
          counts.skipped++;
          if (test.fullName.includes('[postgres]')) needPostgres++;
        }
      }
      // A file that failed to load, or hooks that failed after every test passed, still fail the run.
      counts.failed += broken.length && !failedHere ? 1 : failedHere;
    }
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
    // Skipped must never read as "fine, nothing to run": say which ones and how to run them.
    if (needPostgres && !process.env.TEST_DATABASE_URL) {
      process.stdout.write(
        `Skipped: ${needPostgres} of them need PostgreSQL; set TEST_DATABASE_URL=postgres://USER@HOST:5432/DB to run them (CI does).\n`,
      );
    }
  }
}
