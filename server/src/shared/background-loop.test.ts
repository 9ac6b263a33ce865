import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { StoreHealth } from '../store/store-health.js';
import { BackgroundLoop } from './background-loop.js';

/** A pass the test ends by hand, counting how many started. */
function gatedPass() {
  const gates: (() => void)[] = [];
  let started = 0;
  let fail = false;
  return {
    started: () => started,
    failNext: () => (fail = true),
    finish: () => gates.shift()!(),
    pass: () =>
      new Promise<void>((resolve, reject) => {
        started++;
        gates.push(() => {
          if (fail) {
            fail = false;
            reject(new Error('the pass broke'));
          } else resolve();
        });
      }),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('a background loop', () => {
  it('never runs two passes at once: asked while one runs, it runs exactly once more after it', async () => {
    const gate = gatedPass();
    const loop = new BackgroundLoop(
      {
        what: 'test pass',
        pass: gate.pass,
        health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }),
      },
      { everyMs: 60_000 },
    );
    const first = loop.run();
    const asked = [loop.run(), loop.run(), loop.run()];
    await tick();
    expect(gate.started()).toBe(1);
    let firstEnded = false;
    void first.then(() => (firstEnded = true));
    gate.finish();
    await tick();
    expect(firstEnded).toBe(true);
    expect(gate.started()).toBe(2);
    let askedEnded = false;
    void Promise.all(asked).then(() => (askedEnded = true));
    await tick();
    expect(askedEnded).toBe(false);
    gate.finish();
    await Promise.all(asked);
    await tick();
    expect(gate.started()).toBe(2);
  });

  it('reports a failing pass to StoreHealth and goes on; after stop no pass starts, and stop waits for the one running', async () => {
    const lines: string[] = [];
    const health = new StoreHealth({
      ping: async () => {},
      logger: createLogger('error', { write: (line: string) => void lines.push(line) }),
    });
    const gate = gatedPass();
    const loop = new BackgroundLoop({ what: 'test pass', pass: gate.pass, health }, { everyMs: 60_000 });
    gate.failNext();
    const failing = loop.run();
    await tick();
    gate.finish();
    await expect(failing).resolves.toBeUndefined();
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['test pass failed']);

    const running = loop.run();
    await tick();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await tick();
    expect(stopped).toBe(false);
    gate.finish();
    await Promise.all([running, stopping]);
    await loop.run();
    expect(gate.started()).toBe(2);
  });
});
