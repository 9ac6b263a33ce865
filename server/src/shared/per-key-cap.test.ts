import { describe, expect, it } from 'vitest';
import { PerKeyCap } from './per-key-cap.js';

describe('places per key (model calls and documents read per customer)', () => {
  it('holds at most the limit per customer; the next waits in order and gets the place released, others are not held up', async () => {
    const calls = new PerKeyCap(2);
    const never = new AbortController().signal;
    const a1 = (await calls.wait('a', 1_000, never))!;
    const a2 = (await calls.wait('a', 1_000, never))!;
    expect(await calls.wait('b', 1_000, never)).toBeDefined();
    const order: string[] = [];
    const third = calls.wait('a', 1_000, never).then((r) => (order.push('third'), r));
    const fourth = calls.wait('a', 1_000, never).then((r) => (order.push('fourth'), r));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    a1();
    a1(); // released twice: counted once
    expect(await third).toBeDefined();
    await new Promise((r) => setTimeout(r, 20));
    // The second release gave no place: the fourth still waits for a2.
    expect(order).toEqual(['third']);
    a2();
    expect(await fourth).toBeDefined();
    expect(order).toEqual(['third', 'fourth']);
  });

  it('gives up a wait after its time or when its turn is cut off, leaving the queue as it was', async () => {
    const calls = new PerKeyCap(1);
    const never = new AbortController().signal;
    const held = (await calls.wait('a', 1_000, never))!;
    const started = Date.now();
    expect(await calls.wait('a', 50, never)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const stop = new AbortController();
    const cut = calls.wait('a', 5_000, stop.signal);
    stop.abort();
    expect(await cut).toBeUndefined();
    const next = calls.wait('a', 1_000, never);
    held();
    expect(await next).toBeDefined();
  });

  it('refuses at once a wait past the most that may wait, and takes without waiting what is free', async () => {
    const calls = new PerKeyCap(1);
    const never = new AbortController().signal;
    const held = calls.take('a')!;
    expect(calls.take('a')).toBeUndefined();
    const waiting = calls.wait('a', 1_000, never, 1);
    expect(await calls.wait('a', 1_000, never, 1)).toBeUndefined();
    held();
    const second = (await waiting)!;
    second();
    expect(calls.take('a')).toBeDefined();
  });
});
