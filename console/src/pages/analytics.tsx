import { useState } from 'preact/hooks';
import { get, list, query } from '../api';
import { BarChart } from '../chart';
import type { Agent, Analytics, Deployment } from '../types';
import { ErrorNote, Loading, Title, useLoad } from '../ui';

const DAY_MS = 86_400_000;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A bucket's start as a reader names it: its day, or its day and hour (UTC). */
const labelOf = (start: string, interval: Analytics['interval']) => (interval === 'day' ? start.slice(0, 10) : `${start.slice(0, 10)} ${start.slice(11, 16)}`);

/**
 * How it goes (README, Knowing how it goes): conversations, turns, failures, feedback and latency
 * per day or hour, for every deployment or one deployment or agent, each chart with its numbers.
 */
export function AnalyticsPage() {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const [from, setFrom] = useState(dateOf(today - 13 * DAY_MS));
  const [to, setTo] = useState(dateOf(today));
  const [interval, setInterval] = useState<Analytics['interval']>('day');
  const [deploymentId, setDeploymentId] = useState('');
  const [agentId, setAgentId] = useState('');
  const deployments = useLoad(() => list<Deployment>('/api/v1/deployments?per_page=100'), []);
  const agents = useLoad(() => list<Agent>('/api/v1/agents?per_page=100'), []);
  // `to` as the reader picks it is the last day shown: the API's end is the next midnight.
  const params = { from, to: dateOf(Date.parse(to) + DAY_MS), interval, deployment_id: deploymentId || undefined, agent_id: agentId || undefined };
  const loaded = useLoad(() => get<Analytics>(`/api/v1/analytics${query(params)}`), [from, to, interval, deploymentId, agentId]);
  const data = loaded.data;
  const labels = data?.buckets.map((b) => labelOf(b.start, data.interval)) ?? [];
  const of = <T,>(pick: (b: Analytics['buckets'][number]) => T) => data?.buckets.map(pick) ?? [];
  return (
    <section>
      <Title>Analytics</Title>
      <div class="filters">
        <label>
          From
          <input type="date" value={from} max={to} onInput={(e) => e.currentTarget.value && setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} min={from} onInput={(e) => e.currentTarget.value && setTo(e.currentTarget.value)} />
        </label>
        <label>
          Per
          <select value={interval} onChange={(e) => setInterval(e.currentTarget.value as Analytics['interval'])}>
            <option value="day">day</option>
            <option value="hour">hour</option>
          </select>
        </label>
        <label>
          Deployment
          <select value={deploymentId} onChange={(e) => setDeploymentId(e.currentTarget.value)}>
            <option value="">All deployments</option>
            {deployments.data?.data.map((d) => (
              <option key={d.id} value={d.id}>
                {d.agent_name} ({d.environment})
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent
          <select value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
            <option value="">All agents</option>
            {agents.data?.data.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="muted">Days and hours are UTC. At most 92 days at a time.</p>
      <ErrorNote error={loaded.error} />
      {loaded.loading && !data && <Loading what="analytics" />}
      {data && (
        <>
          <dl class="card facts">
            <dt>Conversations</dt>
            <dd>{data.totals.conversations}</dd>
            <dt>Visitors</dt>
            <dd>{data.totals.visitors}</dd>
            <dt>Turns</dt>
            <dd>{data.totals.turns}</dd>
            <dt>Handoffs to a person</dt>
            <dd>{data.totals.handoffs}</dd>
            <dt>Feedback</dt>
            <dd>
              👍 {data.totals.feedback_up} · 👎 {data.totals.feedback_down}
            </dd>
            <dt>Time to reply (p50 / p95)</dt>
            <dd>{data.totals.time_to_reply_ms.count ? `${data.totals.time_to_reply_ms.p50} / ${data.totals.time_to_reply_ms.p95} ms` : '—'}</dd>
          </dl>
          <div class="charts">
            <BarChart
              title="Conversations and visitors"
              labels={labels}
              series={[
                { name: 'Conversations', values: of((b) => b.conversations), tone: 'main' },
                { name: 'Visitors', values: of((b) => b.visitors), tone: 'alt' },
              ]}
            />
            <BarChart
              title="Turns and failed turns"
              labels={labels}
              series={[
                { name: 'Turns', values: of((b) => b.turns), tone: 'main' },
                { name: 'Failed', values: of((b) => Object.values(b.turns_failed).reduce((a, n) => a + n, 0)), tone: 'bad' },
              ]}
            />
            <BarChart
              title="Failures by reason"
              labels={labels}
              series={[
                { name: 'Hook refused', values: of((b) => b.turns_failed.hook_rejected), tone: 'bad' },
                { name: 'Hook failed', values: of((b) => b.turns_failed.hook_failed), tone: 'alt' },
                { name: 'No reply in time', values: of((b) => b.turns_failed.reply_timeout), tone: 'main' },
              ]}
            />
            <BarChart
              title="Feedback"
              labels={labels}
              series={[
                { name: 'Helpful', values: of((b) => b.feedback_up), tone: 'main' },
                { name: 'Not helpful', values: of((b) => b.feedback_down), tone: 'bad' },
              ]}
            />
            <BarChart
              title="Time to reply"
              unit=" ms"
              labels={labels}
              series={[
                { name: 'p50', values: of((b) => b.time_to_reply_ms.p50), tone: 'main' },
                { name: 'p95', values: of((b) => b.time_to_reply_ms.p95), tone: 'alt' },
              ]}
            />
            <BarChart
              title="Hook call latency"
              unit=" ms"
              labels={labels}
              series={[
                { name: 'p50', values: of((b) => b.hook_latency_ms.p50), tone: 'main' },
                { name: 'p95', values: of((b) => b.hook_latency_ms.p95), tone: 'alt' },
              ]}
            />
          </div>
        </>
      )}
    </section>
  );
}
