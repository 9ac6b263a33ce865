import { describe, expect, it } from 'vitest';
import { ModelCalls } from './model-calls.js';

describe('model calls per customer (MODEL_CONCURRENCY)', () => {
  it('holds at most the limit per customer; the next waits in order and gets the place released, others are not held up', async () => {
    const calls = new ModelCalls(2);
    const never = new AbortController().signal;
    const a1 = (await calls.take('a', 1_000, never))!;
    const a2 = (await calls.take('a', 1_000, never))!;
    expect(await calls.take('b', 1_000, never)).toBeDefined();
    const order: string[] = [];
    const third = calls.take('a', 1_000, never).then((r) => (order.push('third'), r));
    const fourth = calls.take('a', 1_000, never).then((r) => (order.push('fourth'), r));
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
    const calls = new ModelCalls(1);
    const never = new AbortController().signal;
    const held = (await calls.take('a', 1_000, never))!;
    const started = Date.now();
    expect(await calls.take('a', 50, never)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const stop = new AbortController();
    const cut = calls.take('a', 5_000, stop.signal);
    stop.abort();
    expect(await cut).toBeUndefined();
    const next = calls.take('a', 1_000, never);
    held();
    expect(await next).toBeDefined();
  });
});
