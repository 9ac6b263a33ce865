import { useEffect, useState } from 'preact/hooks';
import { get, list, post, query, path } from '../api';
import { Settings } from './deployment-settings';
import { GreetingRules } from './greetings';
import { when } from '../format';
import { serverSnippetOf, signedStringOf, snippetOf, verificationSnippets } from '../snippets';
import type { Agent, CreatedDeployment, Delivery, Deployment, Diagnostics, RotatedSecret } from '../types';
import {
  ActionForm,
  Badge,
  CodeBlock,
  DeliveryView,
  Empty,
  ErrorNote,
  ListTable,
  Loading,
  OnceSecret,
  Title,
  useAction,
  useLoad,
} from '../ui';

/** Whether the deployment's agent answers through the customer's server (its hook), or on its own (its knowledge base, a model). */
const hooked = (d: Pick<Deployment, 'channel_config'>) =>
  Boolean((d.channel_config as Record<string, unknown>).hook_url);

/** What the customer does with a deployment's signing secret: their server verifies hooks with it only when there are hooks. */
const secretUse = (d: Pick<Deployment, 'channel_config'>) =>
  hooked(d)
    ? "Copy it into your server's configuration: it verifies each turn hook and signs each visitor's token with it."
    : "Your agent answers on its own, so no hook comes to your server; your site's server signs each visitor's token with it. Copy it into that server's configuration.";

export function DeploymentsPage() {
  const preset = new URLSearchParams(location.hash.split('?')[1]).get('agent') ?? '';
  const [page, setPage] = useState(1);
  const deployments = useLoad(() => list<Deployment>(path`/api/v1/deployments${query({ page })}`), [page]);
  const agents = useLoad(() => list<Agent>(path`/api/v1/agents?per_page=100`), []);
  const [agentId, setAgentId] = useState(preset);
  const [hookUrl, setHookUrl] = useState('');
  const [created, setCreated] = useState<CreatedDeployment>();
  // The select always shows the agent a create would use: the one asked for when it is listed, else the first.
  const listed = agents.data?.data ?? [];
  const chosen = listed.some((a) => a.id === agentId) ? agentId : (listed[0]?.id ?? '');
  const create = useAction(async () => {
    const body = {
      agent_id: chosen,
      channel_config: hookUrl ? { hook_url: hookUrl } : {},
    };
    setCreated(await post<CreatedDeployment>(path`/api/v1/deployments`, body));
    deployments.reload();
  });
  return (
    <section>
      <Title>Deployments</Title>
      <ActionForm onRun={() => void create.start()}>
        <h2>New deployment</h2>
        {agents.data?.data.length === 0 ? (
          <Empty>
            A deployment puts an agent on your site. <a href="#/agents">Create an agent</a> first.
          </Empty>
        ) : (
          <div class="grid">
            <label>
              Agent
              <select value={chosen} onChange={(e) => setAgentId(e.currentTarget.value)}>
                {agents.data?.data.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name} ({a.status})
                  </option>
                ))}
              </select>
            </label>
            <label>
              Your hook URL (receives each turn; none for an agent that answers with a model)
              <input
                type="url"
                placeholder="https://example.com/concierge/hook"
                value={hookUrl}
                onInput={(e) => setHookUrl(e.currentTarget.value)}
              />
            </label>
          </div>
        )}
        <ErrorNote error={create.error} />
        {created && (
          <>
            <OnceSecret label="Signing secret" value={created.signing_secret} use={secretUse(created)} />
            <p>
              <a href={`#/deployments/${created.id}`}>Open the new deployment</a> to finish its settings and activate
              it.
            </p>
          </>
        )}
        <button type="submit" class="primary" disabled={create.busy || !agents.data?.data.length}>
          Create deployment
        </button>
      </ActionForm>
      <ListTable
        what="Deployments"
        loaded={deployments}
        onPage={setPage}
        empty="No deployment yet: create one above."
        columns={[
          { label: 'Agent', cell: (d) => <a href={`#/deployments/${d.id}`}>{d.agent_name}</a> },
          { label: 'Status', cell: (d) => <Badge value={d.status} /> },
          { label: 'Environment', cell: (d) => d.environment },
          { label: 'Hook', cell: (d) => <code>{String(d.channel_config.hook_url ?? '—')}</code> },
        ]}
      />
    </section>
  );
}

/** What to do about each refusal, in plain words (README, Knowing how it goes). */
function fixFor(refusal: Diagnostics['refused'][number], dep: Deployment): string {
  if (refusal.reason === 'origin_not_allowed')
    return `Pages on ${refusal.origin} are refused: add it to Allowed origins above if the widget belongs there.`;
  if (refusal.reason === 'deployment_inactive')
    return dep.status === 'active'
      ? 'The deployment was inactive then; it is active now.'
      : 'The deployment is inactive: activate it above.';
  const fixes: Record<NonNullable<Diagnostics['refused'][number]['cause']>, string> = {
    signature:
      "Your token endpoint signs with another secret (or sends no JWT): sign with this deployment's signing secret, HS256.",
    audience: "The token's aud is not this deployment's id: set aud to it.",
    expired:
      'The token had expired when the widget used it: mint a fresh one for each page view (the widget refreshes it itself).',
    claims:
      'The token misses sub, iat or exp, lives over 24 hours, or was issued in the future: check the server clock and the claims.',
  };
  return fixes[refusal.cause ?? 'claims'];
}

/** Says how many entries a list leaves out: the service answers with the most frequent ones only. */
function More({ shown, total, what }: { shown: number; total: number; what: string }) {
  if (total <= shown) return null;
  return (
    <p class="muted">
      The {shown} most frequent of {total} {what}. Past 100 a day, new ones are counted together as (other).
    </p>
  );
}

/** Where the widget opened sessions in the last 7 days, and what was refused, each with its fix. */
function InstallDiagnostics({ dep }: { dep: Deployment }) {
  const loaded = useLoad(() => get<Diagnostics>(path`/api/v1/deployments/${dep.id}/diagnostics`), [dep.id]);
  const d = loaded.data;
  return (
    <div class="diagnostics">
      <h3>The last 7 days</h3>
      <ErrorNote error={loaded.error} />
      {d && (
        <>
          <p>
            {d.last_session_at
              ? `Last session opened ${when(d.last_session_at)}.`
              : 'No session opened yet: install the snippet, then open a page with it.'}
          </p>
          {d.origins.length > 0 && (
            <>
              <h4>Seen on</h4>
              <ul class="plain">
                {d.origins.map((o) => (
                  <li key={o.origin}>
                    <code>{o.origin || '(no Origin header)'}</code>: {o.sessions} session{o.sessions === 1 ? '' : 's'},
                    last {when(o.last_seen_at)}
                  </li>
                ))}
              </ul>
              <More shown={d.origins.length} total={d.origins_total} what="origins" />
            </>
          )}
          {d.refused.length > 0 && (
            <>
              <h4>Refused</h4>
              <ul class="plain refused">
                {d.refused.map((r) => (
                  <li key={`${r.reason}${r.origin}${r.cause}`}>
                    <strong>
                      {r.reason.replaceAll('_', ' ')}
                      {r.cause ? ` (${r.cause})` : ''}
                    </strong>
                    : {r.count} time{r.count === 1 ? '' : 's'}, last {when(r.last_at)}. {fixFor(r, dep)}
                  </li>
                ))}
              </ul>
              <More shown={d.refused.length} total={d.refused_total} what="refusals" />
            </>
          )}
          <button type="button" class="small" onClick={loaded.reload}>
            Refresh
          </button>
        </>
      )}
    </div>
  );
}

function TestHook({ dep }: { dep: Deployment }) {
  const [target, setTarget] = useState<'hook' | 'transcript'>('hook');
  const [result, setResult] = useState<Delivery>();
  const test = useAction(async () =>
    setResult(await post<Delivery>(path`/api/v1/deployments/${dep.id}/test-hook`, { target })),
  );
  const snippets = result && verificationSnippets(result);
  return (
    <section class="card">
      <h2>Send a test hook</h2>
      <p>A signed sample, sent exactly as a real one (with "test": true), and what your server answered.</p>
      <div class="filters">
        <label>
          Target
          <select value={target} onChange={(e) => setTarget(e.currentTarget.value as 'hook' | 'transcript')}>
            <option value="hook">Turn hook</option>
            <option value="transcript">Transcript hook</option>
          </select>
        </label>
        <button type="button" class="primary" disabled={test.busy} onClick={() => test.start()}>
          Send test hook
        </button>
      </div>
      <ErrorNote error={test.error} />
      {result && snippets && (
        <div role="status">
          <DeliveryView d={result} />
          <CodeBlock label="The signed string (webhook-id.webhook-timestamp.body)" code={signedStringOf(result)} />
          <CodeBlock label="Verify in Node (the SDK)" code={snippets.node} />
          <CodeBlock label="Verify anywhere (openssl)" code={snippets.openssl} />
        </div>
      )}
    </section>
  );
}

export function DeploymentPage({ id }: { id: string }) {
  const loaded = useLoad(() => get<Deployment>(path`/api/v1/deployments/${id}`), [id]);
  const [dep, setDep] = useState<Deployment>();
  useEffect(() => setDep(loaded.data), [loaded.data]);
  const [secret, setSecret] = useState<RotatedSecret>();
  const [grace, setGrace] = useState('3600');
  const toggle = useAction(async () => {
    const live = dep?.status === 'active';
    if (live && !confirm(`Take ${dep.agent_name} off your site? Its open conversations end.`)) return;
    setDep(
      await post<Deployment>(
        live ? path`/api/v1/deployments/${id}/deactivate` : path`/api/v1/deployments/${id}/activate`,
        {},
      ),
    );
  });
  const rotate = useAction(async () =>
    setSecret(
      await post<RotatedSecret>(path`/api/v1/deployments/${id}/rotate-secret`, { grace_period_s: Number(grace) }),
    ),
  );
  const enableTranscripts = useAction(async () =>
    setDep(await post<Deployment>(path`/api/v1/deployments/${id}/transcript-hook/enable`)),
  );
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!dep) return <Loading what="the deployment" />;
  return (
    <section>
      <p>
        <a href="#/deployments">← Deployments</a>
      </p>
      <Title>{dep.agent_name}</Title>
      <p>
        <Badge value={dep.status} /> {dep.environment} · {dep.call_direction} · deployed {when(dep.deployed_at)}
      </p>
      {/* Live, the next step is trying it, and taking it off the site is the button to think twice about. */}
      <div class="actions">
        {dep.status === 'active' && (
          <a class="button primary" href={`#/try/${dep.id}`}>
            Try it
          </a>
        )}
        <button
          type="button"
          class={dep.status === 'active' ? 'danger' : 'primary'}
          disabled={toggle.busy}
          onClick={() => toggle.start()}
        >
          {dep.status === 'active' ? 'Deactivate' : 'Activate'}
        </button>
        <a class="button" href={`#/conversations?deployment_id=${dep.id}`}>
          Conversations
        </a>
      </div>
      <ErrorNote error={toggle.error} />
      {dep.transcript_hook_status === 'disabled' && (
        <div class="warn transcript-disabled" role="status">
          <p>
            <strong>Transcript events are paused</strong> since {when(dep.transcript_hook_disabled_at)}:{' '}
            {dep.transcript_hook_disabled_reason}. They wait, in order, and none is lost; fix your receiver, then enable
            it again (or save a new transcript URL).
          </p>
          <button type="button" disabled={enableTranscripts.busy} onClick={() => enableTranscripts.start()}>
            Enable again
          </button>
          <ErrorNote error={enableTranscripts.error} />
        </div>
      )}
      <Settings dep={dep} onSaved={setDep} />
      <GreetingRules dep={dep} onSaved={setDep} />
      <TestHook dep={dep} />
      <section class="card">
        <h2>Install</h2>
        <p>Paste this on your pages; your server's token endpoint mints the visitor's token with the signing secret.</p>
        <CodeBlock label="Snippet" code={snippetOf(location.origin, dep.id)} />
        <p>
          {hooked(dep)
            ? 'Your server, on the Node SDK: it verifies each turn hook, answers it, and mints the tokens'
            : 'Your agent answers on its own (no hook URL), so your server only mints the tokens, on the Node SDK'}{' '}
          (Python: <code>sdk/python</code>; any other language: the README's recipe).
        </p>
        <CodeBlock label="Your server (Node)" code={serverSnippetOf(location.origin, dep.id, { hook: hooked(dep) })} />
        <InstallDiagnostics dep={dep} />
      </section>
      <section class="card">
        <h2>Signing secret</h2>
        <p>Rotate it to get a new one; the previous one keeps verifying during the grace period.</p>
        <div class="filters">
          <label>
            Grace period
            <select value={grace} onChange={(e) => setGrace(e.currentTarget.value)}>
              <option value="0">None</option>
              <option value="3600">1 hour</option>
              <option value="86400">1 day</option>
              <option value="604800">7 days</option>
            </select>
          </label>
          <button type="button" disabled={rotate.busy} onClick={() => rotate.start()}>
            Rotate secret
          </button>
        </div>
        <ErrorNote error={rotate.error} />
        {secret && (
          <>
            <OnceSecret label="New signing secret" value={secret.signing_secret} use={secretUse(dep)} />
            <p>The previous secret works until {when(secret.previous_secret_expires_at)}.</p>
          </>
        )}
      </section>
    </section>
  );
}
