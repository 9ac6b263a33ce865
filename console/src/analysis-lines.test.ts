import { describe, expect, it } from 'vitest';
import { criteriaLines, criteriaOf, fieldLines, fieldsOf } from './analysis-lines';

describe("the agent page's analysis lines", () => {
  it('reads fields of each type and criteria, and writes them back as read', () => {
    const fields =
      'party_size (number): How many people\ntopic (dining | spa | other): What they asked about\nvip (boolean): A returning guest';
    const read = fieldsOf(`${fields}\n`);
    expect(read).toEqual({
      list: [
        { name: 'party_size', type: 'number', description: 'How many people' },
        { name: 'topic', type: 'enum', description: 'What they asked about', values: ['dining', 'spa', 'other'] },
        { name: 'vip', type: 'boolean', description: 'A returning guest' },
      ],
    });
    if ('list' in read) expect(fieldLines(read.list)).toBe(fields);
    const criteria = criteriaOf('booked_table: The visitor booked a table');
    expect(criteria).toEqual({ list: [{ id: 'booked_table', description: 'The visitor booked a table' }] });
    if ('list' in criteria) expect(criteriaLines(criteria.list)).toBe('booked_table: The visitor booked a table');
  });

  it('says which line it cannot read', () => {
    expect(fieldsOf('Party Size: how many')).toEqual({
      problem: 'Field line 1: write name (type): description, the name in lowercase letters, digits and _',
    });
    expect(fieldsOf('size (integer): how many')).toEqual({
      problem: 'Field line 1: the type is string, number, boolean, or values like a | b | c',
    });
    expect(criteriaOf('ok\n')).toEqual({
      problem: 'Criterion line 1: write id: what success means, the id in lowercase and _',
    });
  });
});
