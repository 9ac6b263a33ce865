import { useState } from 'preact/hooks';
import { list, path } from '../api';
import {
  type AnalysisFieldSpec,
  criteriaLines,
  criteriaOf,
  type CriterionSpec,
  fieldLines,
  fieldsOf,
} from '../analysis-lines';
import type { ModelEndpoint } from '../types';
import { useLoad } from '../ui';

type Spec = Record<string, unknown>;

interface AnalysisDraft {
  summary?: boolean;
  fields?: AnalysisFieldSpec[];
  criteria?: CriterionSpec[];
}

/**
 * What the service asks of every ended conversation, which model judges tests and analyses, and
 * whether publishing waits for the tests (README, Tests and analysis): parts of the draft spec.
 */
export function AnalysisEditor({ spec, set }: { spec: Spec | undefined; set(key: string, value: unknown): void }) {
  const analysis = (spec?.analysis ?? {}) as AnalysisDraft;
  const evaluation = (spec?.evaluation ?? {}) as { endpoint_id?: string; model?: string };
  const endpoints = useLoad(() => list<ModelEndpoint>(path`/api/v1/model-endpoints?per_page=100`), []);
  const [fields, setFields] = useState(fieldLines(analysis.fields));
  const [criteria, setCriteria] = useState(criteriaLines(analysis.criteria));
  const readFields = fieldsOf(fields);
  const readCriteria = criteriaOf(criteria);
  const setAnalysis = (next: AnalysisDraft) => {
    const kept = { ...analysis, ...next };
    const empty = !kept.summary && !kept.fields?.length && !kept.criteria?.length;
    set('analysis', empty ? undefined : kept);
  };
  const setEvaluation = (key: 'endpoint_id' | 'model', value: string) => {
    const next = { ...evaluation, [key]: value || undefined };
    set('evaluation', next.endpoint_id || next.model ? next : undefined);
  };
  const disabled = !spec;
  return (
    <fieldset class="analysis-editor">
      <legend>Tests and analysis</legend>
      <p class="muted">
        When a conversation ends (or has been quiet 30 minutes), a model reads it once and fills in what you ask here: a
        summary, fields and whether each criterion was met. The history filters by them; Analytics counts success per
        version.
      </p>
      <label class="check">
        <input
          type="checkbox"
          checked={analysis.summary === true}
          disabled={disabled}
          onChange={(e) => setAnalysis({ summary: e.currentTarget.checked })}
        />{' '}
        Summarise each conversation
      </label>
      <label>
        Fields to fill in, one a line: name (string, number, boolean, or a | b | c): what it is
        <textarea
          rows={3}
          class="mono"
          disabled={disabled}
          placeholder={
            'party_size (number): How many people the table is for\ntopic (dining | spa | other): What the visitor asked about'
          }
          value={fields}
          onInput={(e) => {
            setFields(e.currentTarget.value);
            const read = fieldsOf(e.currentTarget.value);
            if ('list' in read) setAnalysis({ fields: read.list.length ? read.list : undefined });
          }}
        />
      </label>
      {'problem' in readFields && <p class="warn">{readFields.problem}</p>}
      <label>
        Success criteria, one a line: id: what success means
        <textarea
          rows={2}
          class="mono"
          disabled={disabled}
          placeholder="booked_table: The visitor booked a table"
          value={criteria}
          onInput={(e) => {
            setCriteria(e.currentTarget.value);
            const read = criteriaOf(e.currentTarget.value);
            if ('list' in read) setAnalysis({ criteria: read.list.length ? read.list : undefined });
          }}
        />
      </label>
      {'problem' in readCriteria && <p class="warn">{readCriteria.problem}</p>}
      <div class="grid">
        <label>
          Endpoint for judges, simulated visitors and analysis (empty: the agent's own, else the service's)
          <select
            value={evaluation.endpoint_id ?? ''}
            disabled={disabled}
            onChange={(e) => setEvaluation('endpoint_id', e.currentTarget.value)}
          >
            <option value="">The agent's own model</option>
            {(endpoints.data?.data ?? []).map((e) => (
              <option key={e.id} value={e.id}>
                {e.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Its model (empty: the agent's)
          <input
            value={evaluation.model ?? ''}
            maxLength={200}
            disabled={disabled}
            placeholder="gpt-4o-mini"
            onInput={(e) => setEvaluation('model', e.currentTarget.value)}
          />
        </label>
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={spec?.require_tests === true}
          disabled={disabled}
          onChange={(e) => set('require_tests', e.currentTarget.checked || undefined)}
        />{' '}
        Publish only when every test passes
      </label>
    </fieldset>
  );
}
