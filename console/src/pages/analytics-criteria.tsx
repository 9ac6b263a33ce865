import type { Analytics, Deployment } from '../types';

type Figures = Analytics['criteria'][number];

const rate = (f: Figures) => (f.success_rate === null ? '–' : `${Math.round(f.success_rate * 100)}%`);

/**
 * Each analysis criterion's success rate (README, Tests and analysis), its agent's versions side by
 * side: a changed prompt shows here as a rate that moved between versions.
 */
export function CriterionFigures({ criteria, deployments }: { criteria: Figures[]; deployments: Deployment[] }) {
  if (!criteria.length) return null;
  const agentName = (id: string) => deployments.find((d) => d.agent_id === id)?.agent_name ?? id;
  const several = new Set(criteria.map((c) => c.agent_id)).size > 1;
  return (
    <section class="card" aria-labelledby="criteria-title">
      <h2 id="criteria-title">Success by criterion and version</h2>
      <p class="muted">
        From the analysis of each ended conversation. The rate counts the conversations where the analyst could tell.
      </p>
      <table>
        <thead>
          <tr>
            {several && <th scope="col">Agent</th>}
            <th scope="col">Criterion</th>
            <th scope="col">Version</th>
            <th scope="col">Met</th>
            <th scope="col">Not met</th>
            <th scope="col">Cannot tell</th>
            <th scope="col">Success rate</th>
          </tr>
        </thead>
        <tbody>
          {criteria.map((f) => (
            <tr key={`${f.agent_id}${f.criterion}${f.agent_version}`}>
              {several && <td>{agentName(f.agent_id)}</td>}
              <td>{f.criterion}</td>
              <td>{f.agent_version === null ? '–' : `v${f.agent_version}`}</td>
              <td>{f.success}</td>
              <td>{f.failure}</td>
              <td>{f.unknown}</td>
              <td>
                <strong>{rate(f)}</strong>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
