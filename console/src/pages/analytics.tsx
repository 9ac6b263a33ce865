import { type RedactionKind, redactionKinds } from '#protocol/privacy';
import { can } from '../roles';
import { CriterionFigures } from './analytics-criteria';
import { guardrailsInWords } from '../turn-timeline';
import { useState } from 'preact/hooks';
import { get, list, query, path } from '../api';
import { type Series, TimeChart } from '../chart';
import type { Agent, Analytics, Deployment } from '../types';
import { DeploymentOptions, ErrorNote, Loading, Title, useLoad } from '../ui';

const DAY_MS = 86_400_000;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A bucket's start as a reader names it: its day, or its day and hour (UTC). */
const labelOf = (start: string, interval: Analytics['interval']) =>
  interval === 'day' ? start.slice(0, 10) : `${start.slice(0, 10)} ${start.slice(11, 16)}`;

type Bucket = Analytics['buckets'][number];
type RuleFigures = Bucket['proactive'][number];
const sumOf = (b: Bucket, key: 'shown' | 'opened' | 'conversations') =>
  b.proactive.reduce((total, rule) => total + rule[key], 0);
const failed = (b: Bucket) => Object.values(b.turns_failed).reduce((a, n) => a + n, 0);

/** The charts, each a title and its series: a name, the number of a bucket, and how it is drawn. */
const CHARTS: { title: string; unit?: string; series: [string, (b: Bucket) => number | null, Series['tone']][] }[] = [
  {
    title: 'Conversations and visitors',
    series: [
      ['Conversations', (b) => b.conversations, 'main'],
      ['Visitors', (b) => b.visitors, 'alt'],
    ],
  },
  {
    title: 'Turns and failed turns',
    series: [
      ['Turns', (b) => b.turns, 'main'],
      ['Failed', failed, 'bad'],
    ],
  },
  {
    title: 'Failures by reason',
    series: [
      ['Hook refused', (b) => b.turns_failed.hook_rejected, 'bad'],
      ['Hook failed', (b) => b.turns_failed.hook_failed, 'alt'],
      ['No reply in time', (b) => b.turns_failed.reply_timeout, 'main'],
      ['Model failed', (b) => b.turns_failed.model_failed, 'warn'],
    ],
  },
  {
    title: 'Feedback',
    series: [
      ['Helpful', (b) => b.feedback_up, 'main'],
      ['Not helpful', (b) => b.feedback_down, 'bad'],
    ],
  },
  {
    // Every greeting rule together (README, Greeting visitors first); the table below has each one.
    title: 'Greetings',
    series: [
      ['Shown', (b) => sumOf(b, 'shown'), 'alt'],
      ['Opened', (b) => sumOf(b, 'opened'), 'main'],
      ['Conversations started', (b) => sumOf(b, 'conversations'), 'warn'],
    ],
  },
  {
    title: 'Time to reply',
    unit: ' ms',
    series: [
      ['p50', (b) => b.time_to_reply_ms.p50, 'main'],
      ['p95', (b) => b.time_to_reply_ms.p95, 'alt'],
    ],
  },
  {
    // Hands-free turns (README, Hands-free voice): from the end of the visitor's speech to the first audio of the reply.
    title: 'Voice to voice',
    unit: ' ms',
    series: [
      ['p50', (b) => b.voice_to_voice_ms.p50, 'main'],
      ['p95', (b) => b.voice_to_voice_ms.p95, 'alt'],
    ],
  },
  {
    title: 'Hook call latency',
    unit: ' ms',
    series: [
      ['p50', (b) => b.hook_latency_ms.p50, 'main'],
      ['p95', (b) => b.hook_latency_ms.p95, 'alt'],
    ],
  },
];

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
  const deployments = useLoad(() => list<Deployment>(path`/api/v1/deployments?per_page=100`), []);
  const agents = useLoad(() => list<Agent>(path`/api/v1/agents?per_page=100`), []);
  // `to` as the reader picks it is the last day shown: the API's end is the next midnight.
  const params = {
    from,
    to: dateOf(Date.parse(to) + DAY_MS),
    interval,
    deployment_id: deploymentId || undefined,
    agent_id: agentId || undefined,
  };
  const loaded = useLoad(
    () => get<Analytics>(path`/api/v1/analytics${query(params)}`),
    [from, to, interval, deploymentId, agentId],
  );
  const data = loaded.data;
  const starts = data?.buckets.map((b) => b.start) ?? [];
  const labels = data?.buckets.map((b) => labelOf(b.start, data.interval)) ?? [];
  return (
    <section>
      <Title>Analytics</Title>
      <div class="filters">
        <label>
          From
          <input
            type="date"
            value={from}
            max={to}
            onInput={(e) => e.currentTarget.value && setFrom(e.currentTarget.value)}
          />
        </label>
        <label>
          To
          <input
            type="date"
            value={to}
            min={from}
            onInput={(e) => e.currentTarget.value && setTo(e.currentTarget.value)}
          />
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
            <DeploymentOptions deployments={deployments.data?.data} />
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
              {data.totals.feedback_up} helpful · {data.totals.feedback_down} not helpful
            </dd>
            <dt>Time to reply (p50 / p95)</dt>
            <dd>
              {data.totals.time_to_reply_ms.count
                ? `${data.totals.time_to_reply_ms.p50} / ${data.totals.time_to_reply_ms.p95} ms`
                : '—'}
            </dd>
            <dt>Voice to voice, hands-free (p50 / p95)</dt>
            <dd>
              {data.totals.voice_to_voice_ms.count
                ? `${data.totals.voice_to_voice_ms.p50} / ${data.totals.voice_to_voice_ms.p95} ms`
                : '—'}
            </dd>
            <dt>Values redacted before storing</dt>
            <dd>{redactionsInWords(data.totals.redactions)}</dd>
            <dt>Sentences stopped by guardrails</dt>
            <dd>{guardrailsInWords(data.totals.guardrails)}</dd>
          </dl>
          <div class="charts">
            {CHARTS.map((chart) => (
              <TimeChart
                key={chart.title}
                title={chart.title}
                unit={chart.unit}
                starts={starts}
                labels={labels}
                series={chart.series.map(([name, pick, tone]) => ({ name, values: data.buckets.map(pick), tone }))}
              />
            ))}
          </div>
          <CriterionFigures criteria={data.criteria} deployments={deployments.data?.data ?? []} />
          <GreetingFigures
            rules={data.totals.proactive}
            deployments={deployments.data?.data ?? []}
            oneDeployment={!!deploymentId}
          />
        </>
      )}
    </section>
  );
}

/** Each greeting rule's figures over the range, its deployment named when several are shown. */
function GreetingFigures({
  rules,
  deployments,
  oneDeployment,
}: {
  rules: RuleFigures[];
  deployments: Deployment[];
  oneDeployment: boolean;
}) {
  if (!rules.length) return null;
  const nameOf = (id: string) => deployments.find((d) => d.id === id)?.agent_name ?? id;
  return (
    <section class="card">
      <h2>Greetings by rule</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            {!oneDeployment && <th scope="col">Deployment</th>}
            <th scope="col">Shown</th>
            <th scope="col">Opened</th>
            <th scope="col">Conversations started</th>
            <th scope="col">Their turns</th>
          </tr>
        </thead>
        <tbody>
          {rules.map((r) => (
            <tr key={`${r.deployment_id}${r.rule_id}`}>
              <td>{can('editor') ? <a href={`#/deployments/${r.deployment_id}`}>{r.rule_id}</a> : r.rule_id}</td>
              {!oneDeployment && <td>{nameOf(r.deployment_id)}</td>}
              <td>{r.shown}</td>
              <td>
                {r.opened}
                {r.shown ? ` (${Math.round((r.opened / r.shown) * 100)}%)` : ''}
              </td>
              <td>{r.conversations}</td>
              <td>{r.turns}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The values taken out of what was said (README, Privacy: what is kept), by kind; a dash when none were. */
function redactionsInWords(counts: Record<RedactionKind, number>): string {
  const said = redactionKinds.filter((kind) => counts[kind]).map((kind) => `${counts[kind]} ${kind}`);
  return said.length ? said.join(' · ') : '—';
}
