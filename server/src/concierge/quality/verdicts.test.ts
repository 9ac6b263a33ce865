import { describe, expect, it } from 'vitest';
import isSafeRegex from 'safe-regex2';
import type { Expectation } from './agent-test.schemas.js';
import { checked, citedBy, holds, type TestOutcome } from './verdicts.js';

const outcome = (replies: string[], more: Partial<TestOutcome> = {}): TestOutcome => ({
  transcript: replies.flatMap((text) => [
    { role: 'visitor' as const, text: 'Hello?' },
    { role: 'agent' as const, text },
  ]),
  tool_calls: [],
  handed_off: false,
  cited: new Set(),
  ...more,
});
const verdictOf = (expectation: Expectation, o: TestOutcome) => checked(expectation, o);

describe("a test's expectations that need no model", () => {
  it('reads the replies, ignoring case for text, each pattern with its flags', () => {
    const o = outcome(['Your table is BOOKED.', 'Sorry, the spa is closed.']);
    expect(verdictOf({ type: 'contains', text: 'booked' }, o)).toMatchObject({ passed: true });
    expect(verdictOf({ type: 'not_contains', text: 'sorry' }, o)).toMatchObject({
      passed: false,
      reason: 'reply 2 says it',
    });
    expect(verdictOf({ type: 'regex', text: 'spa is \\w+' }, o)).toMatchObject({
      passed: true,
      reason: 'reply 2 matches',
    });
    expect(verdictOf({ type: 'regex', text: 'table is booked' }, o)).toMatchObject({ passed: false });
    expect(verdictOf({ type: 'regex', text: 'table is booked', flags: 'i' }, o)).toMatchObject({ passed: true });
  });

  it('cuts off a pattern that backtracks past its time, which the write-time check let through, and fails only that expectation', () => {
    const slow = '^(a|aa)*b$';
    expect(isSafeRegex(slow)).toBe(true);
    const o = outcome(['fine', 'a'.repeat(60)]);
    expect(verdictOf({ type: 'regex', text: slow }, o)).toEqual({
      expectation: { type: 'regex', text: slow },
      passed: false,
      reason: 'the pattern took over 50 ms on reply 2: simplify it',
    });
    // The next pattern runs as ever.
    expect(verdictOf({ type: 'regex', text: '^fine$' }, o)).toMatchObject({ passed: true });
  });

  it('checks tools called with the arguments given, a handoff and the documents cited', () => {
    const o = outcome(['Done.'], {
      tool_calls: [{ name: 'book_table', arguments: { party_size: 4, time: '19:00', extras: [1, 2] } }],
      handed_off: true,
      cited: new Set(['doc-1']),
    });
    expect(verdictOf({ type: 'tool_called', name: 'book_table', arguments: { party_size: 4 } }, o)).toMatchObject({
      passed: true,
    });
    expect(verdictOf({ type: 'tool_called', name: 'book_table', arguments: { party_size: 2 } }, o)).toMatchObject({
      passed: false,
      reason: 'book_table was called with {"party_size":4,"time":"19:00","extras":[1,2]}',
    });
    expect(verdictOf({ type: 'tool_called', name: 'cancel' }, o)).toMatchObject({ passed: false });
    expect(verdictOf({ type: 'handed_off' }, o)).toMatchObject({ passed: true, reason: 'it went to a person' });
    expect(verdictOf({ type: 'handed_off' }, outcome(['Done.']))).toMatchObject({ passed: false });
    expect(verdictOf({ type: 'cites', document_id: 'doc-1' }, o)).toMatchObject({ passed: true });
    expect(verdictOf({ type: 'cites', document_id: 'doc-2' }, o)).toMatchObject({ passed: false });
    expect(verdictOf({ type: 'judge', criterion: 'Polite' }, o)).toBeUndefined();
  });

  it('matches nested arguments key by key, arrays whole', () => {
    expect(holds({ a: { b: 1, c: 2 }, d: [1, 2] }, { a: { b: 1 }, d: [1, 2] })).toBe(true);
    expect(holds({ d: [1, 2, 3] }, { d: [1, 2] })).toBe(false);
    expect(holds({ a: null }, { a: null })).toBe(true);
    expect(holds('4', 4)).toBe(false);
  });

  it('finds the documents a reply cites: a linked section, or the best passage when it has no address', () => {
    const given = JSON.stringify([
      { document_id: 'guide', url: 'https://hotel.example/guide#spa' },
      { document_id: 'menu', url: 'https://hotel.example/menu' },
    ]);
    const links = JSON.stringify([{ type: 'link', label: 'Spa', url: 'https://hotel.example/guide#spa' }]);
    expect(citedBy(given, links)).toEqual(['guide']);
    expect(citedBy(given, null)).toEqual([]);
    expect(
      citedBy(
        JSON.stringify([
          { document_id: 'notes', url: null },
          { document_id: 'more', url: null },
        ]),
        null,
      ),
    ).toEqual(['notes']);
    expect(citedBy(null, links)).toEqual([]);
  });
});
