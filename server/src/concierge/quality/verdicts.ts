import { createContext, Script } from 'node:vm';
import type { Expectation, TestResult, Verdict } from './agent-test.schemas.js';

/** What a test conversation came to, as its expectations are checked against it. */
export type TestOutcome = Pick<TestResult, 'transcript' | 'tool_calls' | 'handed_off'> & {
  /** The documents the agent's replies cited. */
  cited: ReadonlySet<string>;
};

const lower = (text: string) => text.toLocaleLowerCase('en-US');

/** How long a customer's pattern may run on one reply. */
export const PATTERN_MS = 50;
const patternRun = new Script('pattern.test(text)');
const patternContext = createContext({});

/**
 * A customer's pattern on a reply, cut off after {@link PATTERN_MS}: refusing nested repetition when
 * a test is written (agent-test.schemas.ts) misses overlapping alternations like `^(a|aa)*b$`, and
 * the service's loop must not be held by one.
 */
function boundedTest(pattern: RegExp, text: string): boolean | 'too_slow' {
  Object.assign(patternContext, { pattern, text });
  try {
    return patternRun.runInContext(patternContext, { timeout: PATTERN_MS }) === true;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return 'too_slow';
    throw err;
  } finally {
    Object.assign(patternContext, { pattern: undefined, text: undefined });
  }
}

/** Does `actual` hold every key of `wanted` with an equal value (objects compared the same way, arrays whole)? */
export function holds(actual: unknown, wanted: unknown): boolean {
  if (wanted === null || typeof wanted !== 'object') return Object.is(actual, wanted);
  if (Array.isArray(wanted))
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((w, i) => holds(actual[i], w));
  if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false;
  return Object.entries(wanted).every(([key, value]) => holds((actual as Record<string, unknown>)[key], value));
}

/**
 * An expectation that needs no model, checked against the agent's replies (README, Tests and
 * analysis): text matches ignore case, a pattern uses its flags; undefined for a judge's.
 */
export function checked(expectation: Expectation, outcome: TestOutcome): Verdict | undefined {
  const replies = outcome.transcript.filter((line) => line.role === 'agent').map((line) => line.text);
  const said = replies.join('\n');
  const verdict = (passed: boolean, reason: string): Verdict => ({ expectation, passed, reason });
  switch (expectation.type) {
    case 'contains': {
      const found = lower(said).includes(lower(expectation.text));
      return verdict(found, found ? 'a reply says it' : 'no reply says it');
    }
    case 'not_contains': {
      const at = replies.findIndex((reply) => lower(reply).includes(lower(expectation.text)));
      return verdict(at < 0, at < 0 ? 'no reply says it' : `reply ${at + 1} says it`);
    }
    case 'regex': {
      const pattern = new RegExp(expectation.text, `u${expectation.flags ?? ''}`);
      let at = -1;
      for (const [i, reply] of replies.entries()) {
        const matched = boundedTest(pattern, reply);
        if (matched === 'too_slow')
          return verdict(false, `the pattern took over ${PATTERN_MS} ms on reply ${i + 1}: simplify it`);
        if (matched) {
          at = i;
          break;
        }
      }
      return verdict(at >= 0, at >= 0 ? `reply ${at + 1} matches` : 'no reply matches');
    }
    case 'tool_called': {
      const calls = outcome.tool_calls.filter((call) => call.name === expectation.name);
      if (!calls.length) return verdict(false, `${expectation.name} was not called`);
      if (!expectation.arguments) return verdict(true, `${expectation.name} was called`);
      const matching = calls.some((call) => holds(call.arguments, expectation.arguments));
      return verdict(
        matching,
        matching
          ? `${expectation.name} was called with those arguments`
          : `${expectation.name} was called with ${JSON.stringify(calls[calls.length - 1]!.arguments)}`,
      );
    }
    case 'handed_off':
      return verdict(outcome.handed_off, outcome.handed_off ? 'it went to a person' : 'it did not go to a person');
    case 'cites': {
      const cited = outcome.cited.has(expectation.document_id);
      return verdict(cited, cited ? 'a reply cites it' : 'no reply cites it');
    }
    case 'judge':
      return undefined;
  }
}

/** The conversation as a judge or a simulated visitor reads it. */
export const transcriptText = (transcript: TestOutcome['transcript']): string =>
  transcript
    .map(
      (line) =>
        `${line.role === 'visitor' ? 'Visitor' : 'Agent'}: ${line.status ? `(no answer: ${line.status})` : line.text}`,
    )
    .join('\n');

/**
 * The documents a reply cites: a passage it was given whose section its links point at, or (a
 * passage with no address to link) the best one it was given, which the reply was answered from.
 */
export function citedBy(knowledge: string | null, actions: string | null): string[] {
  if (!knowledge) return [];
  const passages = JSON.parse(knowledge) as { document_id: string; url: string | null }[];
  const links = new Set(
    ((actions ? JSON.parse(actions) : []) as { type: string; url?: string }[])
      .filter((a) => a.type === 'link')
      .map((a) => a.url),
  );
  return passages.filter((p, i) => (p.url ? links.has(p.url) : i === 0)).map((p) => p.document_id);
}
