import { useState } from 'preact/hooks';
import { del, list, path, post, put } from '../api';
import { when } from '../format';
import { expectationLine, expectationLines, expectationsOf } from '../test-lines';
import type { Agent, AgentTest, TestResult, TestRun } from '../types';
import { ActionForm, Badge, Empty, ErrorNote, useAction, useLoad } from '../ui';

type Kind = 'turns' | 'simulation';

/** What the test form holds, as typed. */
interface Written {
  name: string;
  kind: Kind;
  turns: string;
  persona: string;
  goal: string;
  maxTurns: string;
  expect: string;
  mocks: string;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

const BLANK: Written = {
  name: '',
  kind: 'turns',
  turns: '',
  persona: '',
  goal: '',
  maxTurns: '6',
  expect: '',
  mocks: '',
};

const writtenOf = (test: AgentTest): Written => ({
  name: test.name,
  kind: test.simulation ? 'simulation' : 'turns',
  turns: (test.turns ?? []).map((t) => t.visitor).join('\n'),
  persona: test.simulation?.persona ?? '',
  goal: test.simulation?.goal ?? '',
  maxTurns: String(test.simulation?.max_turns ?? 6),
  expect: expectationLines(test),
  mocks: test.mocks ? JSON.stringify(test.mocks.tools, null, 2) : '',
});

/** The test as the API takes it, or what is wrong with the form. */
function bodyOf(w: Written): { body: Record<string, unknown> } | { problem: string } {
  const expectations = expectationsOf(w.expect);
  if ('problem' in expectations) return expectations;
  let tools: unknown;
  try {
    tools = w.mocks.trim() ? JSON.parse(w.mocks) : undefined;
  } catch {
    return { problem: 'Mocked tools must be a JSON object: {"tool_name": its answer}' };
  }
  const visitor =
    w.kind === 'turns'
      ? {
          turns: w.turns
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean)
            .map((line) => ({ visitor: line })),
        }
      : { simulation: { persona: w.persona, goal: w.goal, max_turns: Number(w.maxTurns) || 6 } };
  return {
    body: { name: w.name, ...visitor, expect: expectations.list, ...(tools ? { mocks: { tools } } : {}) },
  };
}

/** One test's result: its verdicts, and the conversation it had. */
function ResultView({ result }: { result: TestResult }) {
  return (
    <li class="test-result">
      <p>
        <Badge value={result.passed ? 'passed' : 'failed'} /> <strong>{result.name}</strong>{' '}
        <span class="muted">({(result.duration_ms / 1000).toFixed(1)} s)</span>
      </p>
      {result.error && <p class="warn">{result.error}</p>}
      <ul class="verdicts">
        {result.verdicts.map((v, i) => (
          <li key={i} class={v.passed === null ? 'verdict-unknown' : v.passed ? 'verdict-passed' : 'verdict-failed'}>
            <span aria-hidden="true">{v.passed === null ? '?' : v.passed ? '✓' : '✗'}</span>{' '}
            <code>{expectationLine(v.expectation)}</code>: {v.reason}
          </li>
        ))}
      </ul>
      <details>
        <summary>The conversation</summary>
        <ol class="plain lines">
          {result.transcript.map((line, i) => (
            <li key={i} class={`line line-${line.role === 'visitor' ? 'visitor' : 'agent'}`}>
              <strong>{line.role === 'visitor' ? 'Visitor' : 'Agent'}: </strong>
              {line.status ? <span class="warn">no answer ({line.status})</span> : line.text}
            </li>
          ))}
        </ol>
        {result.tool_calls.length > 0 && (
          <p class="muted">
            Tools called: {result.tool_calls.map((c) => `${c.name} ${JSON.stringify(c.arguments)}`).join('; ')}
          </p>
        )}
        {result.conversation_id && <a href={`#/conversations/${result.conversation_id}`}>Its full history</a>}
      </details>
    </li>
  );
}

/** A run's results, passed first counted. */
export function RunView({ run }: { run: TestRun }) {
  return (
    <div class="test-run" aria-live="polite">
      <p>
        <Badge value={run.status} /> {run.passed} of {run.passed + run.failed} passed against{' '}
        {run.version === null ? 'the draft' : `version ${run.version}`} · {when(run.created_at)}
      </p>
      <ol class="plain">
        {run.results.map((r) => (
          <ResultView key={r.test_id} result={r} />
        ))}
      </ol>
    </div>
  );
}

/**
 * The agent's tests (README, Tests and analysis): written here, run against the draft or a version
 * through the agent's real responder, each result with its conversation and verdicts. `run` is the
 * latest run shown, which the Publish button also makes.
 */
export function AgentTests({ agent, run, onRun }: { agent: Agent; run: TestRun | undefined; onRun(r: TestRun): void }) {
  const tests = useLoad(() => list<AgentTest>(path`/api/v1/agents/${agent.id}/tests?per_page=100`), [agent.id]);
  // The last run made before this page was opened, until one is made here.
  const last = useLoad(() => list<TestRun>(path`/api/v1/agents/${agent.id}/test-runs?per_page=1`), [agent.id]);
  const shown = run ?? last.data?.data[0];
  const [editing, setEditing] = useState<string | 'new' | undefined>();
  const [written, setWritten] = useState<Written>(BLANK);
  const [version, setVersion] = useState('');
  const all = tests.data?.data ?? [];
  const read = bodyOf(written);
  const save = useAction(async () => {
    if ('problem' in read) return;
    if (editing === 'new') await post(path`/api/v1/agents/${agent.id}/tests`, read.body);
    else await put(path`/api/v1/agents/${agent.id}/tests/${editing!}`, read.body);
    setEditing(undefined);
    tests.reload();
  });
  const remove = useAction(async (test: AgentTest) => {
    if (!confirm(`Delete the test “${test.name}”?`)) return;
    await del(path`/api/v1/agents/${agent.id}/tests/${test.id}`);
    tests.reload();
  });
  const runAll = useAction(async () =>
    onRun(await post<TestRun>(path`/api/v1/agents/${agent.id}/tests/run`, version ? { version: Number(version) } : {})),
  );
  const field = (key: keyof Written) => ({
    value: written[key],
    onInput: (e: { currentTarget: { value: string } }) => setWritten({ ...written, [key]: e.currentTarget.value }),
  });
  return (
    <section class="card" id="tests" aria-labelledby="tests-title">
      <h2 id="tests-title">Tests</h2>
      <p class="muted">
        Each test is a conversation the agent must get right: the visitor's lines (or a model playing a visitor with a
        goal), and what the replies must say or do. Runs go through the agent's real responder; mocked tools are
        answered as written. With <code>require_tests</code> in the spec, publishing waits for every test to pass.
      </p>
      <ErrorNote error={tests.error ?? remove.error} />
      {all.length === 0 && !editing && <Empty>No tests yet. Write one, or make one from a conversation.</Empty>}
      {all.length > 0 && (
        <ul class="plain test-list">
          {all.map((t) => (
            <li key={t.id}>
              <strong>{t.name}</strong>{' '}
              <span class="muted">
                {t.simulation
                  ? `simulated visitor, up to ${plural(t.simulation.max_turns, 'turn')}`
                  : plural(t.turns?.length ?? 0, 'turn')}{' '}
                · {plural(t.expect.length, 'expectation')}
              </span>{' '}
              <button
                type="button"
                onClick={() => {
                  setEditing(t.id);
                  setWritten(writtenOf(t));
                }}
              >
                Edit
              </button>{' '}
              <button type="button" class="danger" onClick={() => remove.start(t)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      {editing ? (
        <ActionForm class="test-form" onRun={() => void save.start()}>
          <h3>{editing === 'new' ? 'New test' : `Edit “${written.name}”`}</h3>
          <label>
            Name
            <input required maxLength={200} {...field('name')} />
          </label>
          <fieldset>
            <legend>The visitor</legend>
            <label class="check">
              <input
                type="radio"
                name="kind"
                checked={written.kind === 'turns'}
                onChange={() => setWritten({ ...written, kind: 'turns' })}
              />{' '}
              Says these lines, one a turn
            </label>
            <label class="check">
              <input
                type="radio"
                name="kind"
                checked={written.kind === 'simulation'}
                onChange={() => setWritten({ ...written, kind: 'simulation' })}
              />{' '}
              Is played by a model
            </label>
          </fieldset>
          {written.kind === 'turns' ? (
            <label>
              The visitor's lines
              <textarea rows={3} placeholder="I'd like a table for four tonight" {...field('turns')} />
            </label>
          ) : (
            <div class="grid">
              <label>
                Who they are
                <input maxLength={1000} placeholder="A guest arriving late, in a hurry" {...field('persona')} />
              </label>
              <label>
                What they want
                <input maxLength={1000} placeholder="Book a table for four at 8 pm" {...field('goal')} />
              </label>
              <label>
                Turns at most (1–20)
                <input type="number" min={1} max={20} {...field('maxTurns')} />
              </label>
            </div>
          )}
          <label>
            What the replies must do, one a line: says:, never says:, matches:, calls: tool {'{arguments}'}, hands off,
            cites: document id, judge: a criterion a model checks
            <textarea
              rows={4}
              class="mono"
              placeholder={'says: booked\ncalls: book_table {"party_size": 4}\njudge: The agent confirms the time'}
              {...field('expect')}
            />
          </label>
          <label>
            Mocked tools (optional): JSON of each tool and the answer it gives
            <textarea rows={2} class="mono" placeholder={'{"book_table": {"ok": true}}'} {...field('mocks')} />
          </label>
          {'problem' in read && <p class="warn">{read.problem}</p>}
          <ErrorNote error={save.error} />
          <div class="actions">
            <button type="submit" class="primary" disabled={save.busy || 'problem' in read}>
              Save the test
            </button>
            <button type="button" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
          </div>
        </ActionForm>
      ) : (
        <div class="actions">
          <button
            type="button"
            onClick={() => {
              setEditing('new');
              setWritten(BLANK);
            }}
          >
            Write a test
          </button>
          <label class="check">
            Against{' '}
            <select value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
              <option value="">the draft</option>
              {Array.from({ length: agent.version }, (_, i) => agent.version - i).map((v) => (
                <option key={v} value={v}>
                  version {v}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            class="primary"
            disabled={runAll.busy || all.length === 0}
            onClick={() => runAll.start()}
          >
            {runAll.busy ? 'Running…' : 'Run the tests'}
          </button>
        </div>
      )}
      <ErrorNote error={runAll.error} />
      {shown && <RunView run={shown} />}
    </section>
  );
}
