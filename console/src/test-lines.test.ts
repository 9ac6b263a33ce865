import { describe, expect, it } from 'vitest';
import { expectationLines, expectationsOf } from './test-lines';

describe("the Tests section's expectation lines", () => {
  it('reads each form, and writes each back as it reads', () => {
    const text = [
      'says: booked',
      'never says: sorry',
      'matches: \\d+ guests',
      'calls: book_table {"party_size": 4}',
      'calls: hand_off',
      'hands off',
      'cites: 2f4d',
      'judge: The agent stays polite',
    ].join('\n');
    const read = expectationsOf(`${text}\n\n`);
    expect(read).toEqual({
      list: [
        { type: 'contains', text: 'booked' },
        { type: 'not_contains', text: 'sorry' },
        { type: 'regex', text: '\\d+ guests', flags: 'i' },
        { type: 'tool_called', name: 'book_table', arguments: { party_size: 4 } },
        { type: 'tool_called', name: 'hand_off' },
        { type: 'handed_off' },
        { type: 'cites', document_id: '2f4d' },
        { type: 'judge', criterion: 'The agent stays polite' },
      ],
    });
    if (!('list' in read)) throw new Error('not read');
    expect(expectationLines({ expect: read.list as never })).toBe(
      text.replace('{"party_size": 4}', '{"party_size":4}'),
    );
  });

  it('names the first line it cannot read, and why', () => {
    expect(expectationsOf('says: hi\nbooks a table')).toEqual({
      problem:
        'Line 2 is not an expectation: start it with says:, never says:, matches:, calls:, hands off, cites: or judge:',
    });
    expect(expectationsOf('calls: book {party: 4}')).toEqual({
      problem: "Line 1: the arguments after the tool's name are not JSON",
    });
  });
});
