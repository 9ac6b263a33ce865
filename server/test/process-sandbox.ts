import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { NodeProcess } from './service-process.js';

/**
 * A describe block's room for real service processes: a temporary directory (`root`, for their
 * stores), removed after the block, and the processes it started (`running`), killed after each test.
 */
export function processSandbox(prefix: string): { readonly root: string; readonly running: NodeProcess[] } {
  let root = '';
  const running: NodeProcess[] = [];
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  });
  afterEach(() => {
    for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return {
    get root() {
      return root;
    },
    running,
  };
}
