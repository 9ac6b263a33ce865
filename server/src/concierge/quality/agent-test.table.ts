export const testRunStatuses = ['running', 'passed', 'failed'] as const;
export type TestRunStatus = (typeof testRunStatuses)[number];

/** One of an agent's tests (README, Tests and analysis). */
export interface AgentTestTable {
  id: string;
  customer_id: string;
  agent_id: string;
  name: string;
  /** JSON of the test as written: `{turns | simulation, expect, mocks?}`. */
  test: string;
  created_at: string;
  updated_at: string;
}

/** A run of an agent's tests against its draft or a version, with each test's result. */
export interface AgentTestRunTable {
  id: string;
  customer_id: string;
  agent_id: string;
  /** The deployment whose hook, limits and voice the run's conversations used. */
  deployment_id: string;
  /** The version run; null: the draft. */
  version: number | null;
  /** The spec the run's conversations were answered by, as it was when the run began. */
  spec: string;
  status: TestRunStatus;
  passed: number;
  failed: number;
  /** JSON of each test's result; null while running. */
  results: string | null;
  created_at: string;
  finished_at: string | null;
}
