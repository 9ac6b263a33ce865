import type { Db } from '../../database.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import type { EgressPolicy } from '../../shared/egress.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import type { ConversationBus } from '../events/conversation-bus.js';
import type { JsonModel } from '../models/json-completion.js';
import { cannotRun } from '../models/evaluation-model.js';
import type { TurnService } from '../turns/turn.service.js';
import type { TestBody, TestResult, Verdict } from './agent-test.schemas.js';
import { testTranscript, turnState } from './agent-test.repository.js';
import { judge, nextVisitorLine } from './test-models.js';
import { checked, citedBy, type TestOutcome } from './verdicts.js';

/** A test as a run takes it. */
export interface TestToRun {
  id: string;
  name: string;
  test: TestBody;
}

/**
 * The run a test belongs to: its id, the deployment its conversations use, the version (null: the
 * draft), and the model that judges and plays visitors (or why there is none), found once a run.
 */
export interface RunOf {
  id: string;
  dep: DeploymentContext;
  version: number | null;
  model: JsonModel | string;
}

const FINAL = new Set(['resolved', 'failed', 'expired']);
/** How often a test looks at its turn besides being told by the bus (a reply stored on another node). */
const LOOK_EVERY_MS = 250;

export interface TestRunnerParts {
  db: Db;
  conversations: Pick<ConversationService, 'start' | 'end'>;
  turns: Pick<TurnService, 'submit'>;
  bus: Pick<ConversationBus, 'subscribe'>;
  egress: EgressPolicy;
}

/**
 * Runs one test (README, Tests and analysis) the way a visitor's turns run: a conversation of the
 * run is started on the deployment, each visitor line is a turn submitted to the turn service and
 * answered by the agent's real responder (its spec the run's, its mocked tools answering as
 * written), then the expectations are checked against what was stored.
 */
export class TestRunner {
  constructor(private readonly parts: TestRunnerParts) {}

  async run(run: RunOf, test: TestToRun): Promise<TestResult> {
    const started = performance.now();
    const { dep } = run;
    const result = (
      outcome: TestOutcome | undefined,
      verdicts: Verdict[],
      error: string | null,
      id: string | null,
    ) => ({
      test_id: test.id,
      name: test.name,
      passed: error === null && verdicts.every((v) => v.passed !== false),
      conversation_id: id,
      transcript: outcome?.transcript ?? [],
      tool_calls: outcome?.tool_calls ?? [],
      handed_off: outcome?.handed_off ?? false,
      verdicts,
      error,
      duration_ms: Math.round(performance.now() - started),
    });
    const { model } = run;
    if (test.test.simulation && typeof model === 'string')
      return result(undefined, [], cannotRun('A simulated visitor', model), null);
    const conversation = await this.parts.conversations.start(
      dep,
      { sub: `test-run:${run.id}:${test.id}`, name: 'Test visitor', preview: true },
      Number.MAX_SAFE_INTEGER,
      test.test.language,
      { runId: run.id, mocks: test.test.mocks?.tools ?? {}, version: run.version },
    );
    let error: string | null = null;
    try {
      error = await this.#converse(run, conversation.id, test.test, model);
    } finally {
      await this.parts.conversations.end(dep, conversation.id, 'user_ended');
    }
    const outcome = await this.#outcome(conversation.id);
    const verdicts: Verdict[] = [];
    for (const expectation of test.test.expect) {
      const verdict = checked(expectation, outcome);
      if (verdict) verdicts.push(verdict);
      else if (expectation.type === 'judge')
        verdicts.push({
          expectation,
          ...(typeof model === 'string'
            ? { passed: null, reason: cannotRun('The judge', model) }
            : await judge(model, expectation.criterion, outcome.transcript, this.parts.egress)),
        });
    }
    return result(outcome, verdicts, error, conversation.id);
  }

  /** The visitor's side: the test's lines, or the simulated visitor's; why it stopped short, or null. */
  async #converse(run: RunOf, conversationId: string, test: TestBody, model: RunOf['model']): Promise<string | null> {
    const say = async (text: string, index: number): Promise<string | null> => {
      const submitted = await this.parts.turns.submit(run.dep, conversationId, {
        client_turn_id: `test-${index}`,
        text,
        mode: 'text',
        ...(test.language ? { language: test.language } : {}),
      });
      if (submitted.outcome === 'refused') return `turn ${index + 1} was refused: ${submitted.error.message}`;
      if (submitted.outcome !== 'accepted') return `turn ${index + 1} was not taken (${submitted.outcome})`;
      const status = await this.#settled(conversationId, submitted.turnId, run.dep.limits.replyTimeoutS * 1000 + 2_000);
      return status ? null : `turn ${index + 1} had no answer within the reply timeout`;
    };
    if (test.turns) {
      for (const [index, turn] of test.turns.entries()) {
        const stopped = await say(turn.visitor, index);
        if (stopped) return stopped;
      }
      return null;
    }
    const simulation = test.simulation!;
    for (let index = 0; index < simulation.max_turns; index++) {
      const { transcript } = await this.#outcome(conversationId);
      const line = await nextVisitorLine(
        model as Exclude<typeof model, string>,
        simulation,
        transcript,
        this.parts.egress,
      );
      if (!line.ok) return `the simulated visitor could not go on: ${line.why}`;
      if (line.done || !line.message.trim()) return null;
      const stopped = await say(line.message.trim().slice(0, 2_000), index);
      if (stopped) return stopped;
    }
    return null;
  }

  /** Resolves with the turn's final status once it has one, or undefined when `timeoutMs` passes first. */
  #settled(conversationId: string, turnId: string, timeoutMs: number): Promise<string | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (status: string | undefined) => {
        if (done) return;
        done = true;
        unsubscribe();
        clearInterval(look);
        clearTimeout(timer);
        resolve(status);
      };
      const check = () =>
        void turnState(this.parts.db, turnId).then(
          (turn) => turn && FINAL.has(turn.status) && finish(turn.status),
          () => undefined,
        );
      const unsubscribe = this.parts.bus.subscribe(conversationId, check);
      const look = setInterval(check, LOOK_EVERY_MS);
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      check();
    });
  }

  /** The conversation as stored: the lines said, the tools called, whether it went to a person, the documents cited. */
  async #outcome(conversationId: string): Promise<TestOutcome> {
    const { turns, tools, conversation } = await testTranscript(this.parts.db, conversationId);
    const transcript: TestOutcome['transcript'] = [];
    const cited = new Set<string>();
    for (const turn of turns) {
      transcript.push({ role: 'visitor', text: turn.text });
      if (turn.status === 'resolved') transcript.push({ role: 'agent', text: turn.reply_text ?? '' });
      else if (FINAL.has(turn.status))
        transcript.push({ role: 'agent', text: '', status: turn.failure_reason ?? turn.status });
      for (const id of citedBy(turn.knowledge, turn.reply_actions)) cited.add(id);
    }
    return {
      transcript,
      tool_calls: tools.map((t) => {
        const body = JSON.parse(JSON.parse(t.request).body) as { tool: string; arguments: unknown };
        return { name: body.tool, arguments: body.arguments };
      }),
      handed_off: Boolean(conversation && (conversation.needs_person || conversation.handler === 'person')),
      cited,
    };
  }
}
