import { beforeAll, describe, expect, it } from 'vitest';

describe('a suite whose setup fails', () => {
  beforeAll(() => {
    throw new Error('the store is not there');
  });
  it('would pass', () => expect(1).toBe(1));
  it('would pass too', () => expect(1).toBe(1));
});

describe('a suite that runs', () => {
  it('passes', () => expect(1).toBe(1));
  it.skip('is skipped on purpose', () => expect(1).toBe(1));
});

describe('a suite on PostgreSQL [postgres]', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)('runs only with TEST_DATABASE_URL', () => expect(1).toBe(1));
});
