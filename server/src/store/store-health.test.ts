import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../../test/harness.js';
import { createLogger } from '../logger.js';
import { isStoreUnavailable, StoreHealth } from './store-health.js';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const caught = async (work: () => unknown): Promise<unknown> => {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
};

function recordingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

describe('isStoreUnavailable', () => {
  it('knows a store that cannot be reached from a statement that is wrong', async () => {
    const port = await closedPort();
    const refused = await caught(() => new pg.Client({ host: '127.0.0.1', port }).connect());
    expect(isStoreUnavailable(refused)).toBe(true);

    const dir = mkdtempSync(join(tmpdir(), 'concierge-health-'));
    try {
      const holder = new SQLite(join(dir, 'x.sqlite'));
      holder.exec('create table t (v int)');
      holder.exec('begin immediate');
      const other = new SQLite(join(dir, 'x.sqlite'), { timeout: 0 });
      expect(isStoreUnavailable(await caught(() => other.exec('insert into t values (1)')))).toBe(true);
      expect(isStoreUnavailable(await caught(() => other.exec('insert into nowhere values (1)')))).toBe(false);
      holder.close();
      other.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(isStoreUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isStoreUnavailable('ECONNREFUSED')).toBe(false);
  });

  it.skipIf(!TEST_DATABASE_URL)(
    'on PostgreSQL: a terminated connection is an outage, a bad statement is not [postgres]',
    async () => {
      const victim = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await victim.connect();
      const lost = new Promise<Error>((resolve) => victim.on('error', resolve));
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      expect(isStoreUnavailable(await caught(() => admin.query('selec 1')))).toBe(false);
      await admin.query('select pg_terminate_backend($1)', [(victim as unknown as { processID: number }).processID]);
      expect(isStoreUnavailable(await lost)).toBe(true);
      expect(isStoreUnavailable(await caught(() => victim.query('select 1')))).toBe(true);
      await admin.end();
    },
  );
});

describe('StoreHealth', () => {
  const outage = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  it('retries a change until the store takes it, logging the outage once when it starts and once when it ends', async () => {
    const { logger, lines } = recordingLogger();
    let reachable = false;
    const health = new StoreHealth({
      ping: async () => {
        if (!reachable) throw outage();
      },
      logger,
    });
    let tries = 0;
    const stored = health.persist('storing a change', async () => {
      tries++;
      if (!reachable) throw outage();
      return 'stored';
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(health.down).toBe(true);
    expect(tries).toBeGreaterThan(2);
    reachable = true;
    expect(await stored).toBe('stored');
    await new Promise((r) => setTimeout(r, 700));
    expect(health.down).toBe(false);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, 'store unavailable; retrying until it answers'],
      [40, 'store reachable again'],
    ]);
    health.close();
  });

  it('throws other errors at once, and gives up when told to stop', async () => {
    const { logger, lines } = recordingLogger();
    const health = new StoreHealth({
      ping: async () => {
        throw outage();
      },
      logger,
    });
    let tries = 0;
    await expect(
      health.persist('a bug', async () => {
        tries++;
        throw new TypeError('not a store problem');
      }),
    ).rejects.toThrow('not a store problem');
    expect(tries).toBe(1);

    const stop = new AbortController();
    const abandoned = health.persist(
      'waiting for the store',
      async () => {
        throw outage();
      },
      stop.signal,
    );
    setTimeout(() => stop.abort(), 300);
    await expect(abandoned).rejects.toThrow('ECONNREFUSED');
    expect(health.failed(new TypeError('boom'), 'something else')).toBe(false);
    expect(lines.map((l) => l.msg)).toEqual(['store unavailable; retrying until it answers', 'something else failed']);
    health.close();
  });
});
