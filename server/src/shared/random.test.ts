import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newTimeOrderedId } from './random.js';

describe('newTimeOrderedId', () => {
  it('makes UUIDs of version 7 that sort as they were made, thousands within one millisecond included', () => {
    const before = Date.now();
    const ids = Array.from({ length: 20_000 }, newTimeOrderedId);
    expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(
      true,
    );
    expect(ids.every((id) => z.uuid().safeParse(id).success)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // Its first 48 bits are the time it was made.
    expect(parseInt(ids[0]!.replace('-', '').slice(0, 12), 16)).toBeGreaterThanOrEqual(before);
  });
});
