import { useEffect } from 'preact/hooks';
import { type ApiPath, list, path } from '../api';
import { checklist, type Facts, isLive } from '../checklist';
import { can } from '../roles';
import { ErrorNote, Loading, Title, useLoad } from '../ui';

const count = async (to: ApiPath) => (await list(to)).meta.total_count;

const useFacts = () =>
  useLoad(async (): Promise<Facts> => {
    const [agents, published, deployments, tests, active, conversations, visitors] = await Promise.all([
      count(path`/api/v1/agents?per_page=1`),
      count(path`/api/v1/agents?per_page=1&status=published`),
      count(path`/api/v1/deployments?per_page=1`),
      count(path`/api/v1/deliveries?per_page=1&kind=test`),
      count(path`/api/v1/deployments?per_page=1&status=active`),
      count(path`/api/v1/conversations?per_page=1`),
      count(path`/api/v1/conversations?per_page=1&preview=false`),
    ]);
    return { agents, published, deployments, tests, active, conversations, visitors };
  }, []);

/** `#/`: the Inbox once the concierge is live (the front desk's daily page), else the checklist. */
export function Home() {
  return can('editor') ? <BuildersHome /> : <InboxFirst />;
}

/** Who answers visitors starts where they are waiting. */
function InboxFirst() {
  useEffect(() => location.replace('#/inbox'), []);
  return <Loading what="the inbox" />;
}

function BuildersHome() {
  const facts = useFacts();
  const live = facts.data !== undefined && isLive(facts.data);
  useEffect(() => {
    if (live) location.replace('#/inbox');
  }, [live]);
  return live ? <Loading what="the inbox" /> : <Checklist facts={facts} />;
}

/** `#/start`: the checklist, whatever the account's progress. */
export function GettingStarted() {
  return <Checklist facts={useFacts()} />;
}

function Checklist({ facts }: { facts: ReturnType<typeof useFacts> }) {
  const steps = facts.data ? checklist(facts.data) : [];
  const next = steps.find((s) => !s.done);
  return (
    <section>
      <Title>Getting started</Title>
      <p>
        From nothing to a concierge answering on your site, in six steps. Each one is ticked from what your account
        holds.
      </p>
      <ErrorNote error={facts.error} />
      {facts.loading && !facts.data && <Loading what="your progress" />}
      <ol class="checklist">
        {steps.map((s) => (
          <li key={s.id} class={s.done ? 'done' : s === next ? 'next' : ''}>
            <span class="tick" aria-hidden="true">
              {s.done ? '✓' : ''}
            </span>
            <a href={s.href}>{s.title}</a>
            <span class="sr-only">{s.done ? ' (done)' : s === next ? ' (next step)' : ' (to do)'}</span>
          </li>
        ))}
      </ol>
      {facts.data && !next && (
        <p class="ok">All done: your concierge is live. Follow its conversations under Conversations.</p>
      )}
    </section>
  );
}
