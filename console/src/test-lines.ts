import type { AgentTest, TestExpectation } from './types';

/**
 * A test's expectations as the console's Tests section writes them (README, Tests and analysis),
 * one a line:
 *
 *   says: booked              contains
 *   never says: sorry         not_contains
 *   matches: \d+ guests       regex (case-insensitive)
 *   calls: book_table {"party_size": 4}
 *   hands off
 *   cites: <document id>
 *   judge: The agent stays polite
 */
const FORMS: [RegExp, (m: RegExpExecArray) => TestExpectation][] = [
  [/^says:\s*(.+)$/i, (m) => ({ type: 'contains', text: m[1]!.trim() })],
  [/^never says:\s*(.+)$/i, (m) => ({ type: 'not_contains', text: m[1]!.trim() })],
  [/^matches:\s*(.+)$/i, (m) => ({ type: 'regex', text: m[1]!.trim(), flags: 'i' })],
  [
    /^calls:\s*([a-zA-Z0-9_-]+)\s*(\{.*\})?\s*$/i,
    (m) => ({ type: 'tool_called', name: m[1]!, ...(m[2] ? { arguments: JSON.parse(m[2]) } : {}) }),
  ],
  [/^hands off$/i, () => ({ type: 'handed_off' })],
  [/^cites:\s*(\S+)$/i, (m) => ({ type: 'cites', document_id: m[1]! })],
  [/^judge:\s*(.+)$/i, (m) => ({ type: 'judge', criterion: m[1]!.trim() })],
];

/** The expectations written, or the first line that is none of the forms. */
export function expectationsOf(text: string): { list: TestExpectation[] } | { problem: string } {
  const list: TestExpectation[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    let found: TestExpectation | undefined;
    for (const [form, make] of FORMS) {
      const m = form.exec(line);
      if (!m) continue;
      try {
        found = make(m);
      } catch {
        return { problem: `Line ${i + 1}: the arguments after the tool's name are not JSON` };
      }
      break;
    }
    if (!found)
      return {
        problem: `Line ${i + 1} is not an expectation: start it with says:, never says:, matches:, calls:, hands off, cites: or judge:`,
      };
    list.push(found);
  }
  return { list };
}

/** An expectation as a line of the form above. */
export function expectationLine(e: TestExpectation): string {
  switch (e.type) {
    case 'contains':
      return `says: ${e.text}`;
    case 'not_contains':
      return `never says: ${e.text}`;
    case 'regex':
      return `matches: ${e.text}`;
    case 'tool_called':
      return `calls: ${e.name}${e.arguments ? ` ${JSON.stringify(e.arguments)}` : ''}`;
    case 'handed_off':
      return 'hands off';
    case 'cites':
      return `cites: ${e.document_id}`;
    case 'judge':
      return `judge: ${e.criterion}`;
  }
}

/** A test's expectations written back as lines, for editing. */
export const expectationLines = (test: Pick<AgentTest, 'expect'>) => test.expect.map(expectationLine).join('\n');
