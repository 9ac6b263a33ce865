import { useEffect, useState } from 'preact/hooks';
import { get, list, post, put, query, path } from '../api';
import { GreetingRules } from './greetings';
import {
  languageProblems,
  originProblems,
  serverSnippetOf,
  signedStringOf,
  snippetOf,
  verificationSnippets,
  when,
} from '../logic';
import type {
  Agent,
  AgentVersion,
  CreatedDeployment,
  Delivery,
  Deployment,
  Diagnostics,
  RotatedSecret,
} from '../types';
import {
  ActionForm,
  Badge,
  CodeBlock,
  DeliveryView,
  Empty,
  ErrorNote,
  ListTable,
  Loading,
  LocaleOptions,
  VoiceSample,
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

type Json = Record<string, unknown>;
const num = (v: string) => (v === '' ? undefined : Number(v));

function Settings({ dep, onSaved }: { dep: Deployment; onSaved(d: Deployment): void }) {
  const channel = dep.channel_config as Json;
  const theme = (channel.widget ?? {}) as Json;
  const [hookUrl, setHookUrl] = useState(String(channel.hook_url ?? ''));
  const [transcriptUrl, setTranscriptUrl] = useState(String(channel.transcript_hook_url ?? ''));
  const [origins, setOrigins] = useState(((channel.allowed_origins as string[] | undefined) ?? []).join('\n'));
  const [title, setTitle] = useState(String(theme.title ?? ''));
  const [accent, setAccent] = useState(String(theme.accent_color ?? '#1d4ed8'));
  const [position, setPosition] = useState(String(theme.position ?? 'bottom-right'));
  const [languages, setLanguages] = useState(((theme.languages as string[] | undefined) ?? []).join('\n'));
  const [previewLocale, setPreviewLocale] = useState('en');
  const languageList = languages.split(/[\s,]+/).filter(Boolean);
  const rules = dep.engagement_rules as Json;
  const runtime = dep.runtime_config as Json;
  const [maxTurns, setMaxTurns] = useState(String(rules.max_turns_per_conversation ?? ''));
  const [perMinute, setPerMinute] = useState(String(rules.turns_per_minute ?? ''));
  const [hookTimeout, setHookTimeout] = useState(String(runtime.hook_timeout_ms ?? ''));
  const [replyTimeout, setReplyTimeout] = useState(String(runtime.reply_timeout_s ?? ''));
  const [recognition, setRecognition] = useState(String(runtime.speech_recognition ?? 'auto'));
  const [synthesis, setSynthesis] = useState(String(runtime.speech_synthesis ?? 'auto'));
  const [waitNoticeS, setWaitNoticeS] = useState(String(runtime.person_wait_notice_s ?? ''));
  const [waitNotice, setWaitNotice] = useState(String(runtime.person_wait_notice ?? ''));
  const [version, setVersion] = useState(dep.agent_version === null ? '' : String(dep.agent_version));
  const [environment, setEnvironment] = useState(dep.environment);
  const [direction, setDirection] = useState(dep.call_direction);
  const versions = useLoad(
    () => list<AgentVersion>(path`/api/v1/agents/${dep.agent_id}/versions?per_page=100`),
    [dep.agent_id],
  );
  const originList = origins.split(/\s+/).filter(Boolean);
  const problems = originProblems(originList);
  const [warnings, setWarnings] = useState<{ path: string; message: string }[]>([]);
  const save = useAction(async () => {
    const { data, meta } = await put<Deployment>(path`/api/v1/deployments/${dep.id}`, {
      agent_version: version === '' ? null : Number(version),
      environment,
      call_direction: direction,
      channel_config: {
        ...channel,
        hook_url: hookUrl || undefined,
        transcript_hook_url: transcriptUrl || undefined,
        allowed_origins: originList,
        widget: {
          ...theme,
          title: title || undefined,
          accent_color: accent,
          position,
          languages: languageList.length ? languageList : undefined,
        },
      },
      engagement_rules: { ...rules, max_turns_per_conversation: num(maxTurns), turns_per_minute: num(perMinute) },
      runtime_config: {
        ...runtime,
        hook_timeout_ms: num(hookTimeout),
        reply_timeout_s: num(replyTimeout),
        speech_recognition: recognition,
        speech_synthesis: synthesis,
        person_wait_notice_s: num(waitNoticeS),
        person_wait_notice: waitNotice.trim() || undefined,
      },
    });
    setWarnings(meta.warnings ?? []);
    onSaved(data);
  });
  return (
    <ActionForm onRun={() => void save.start()}>
      <h2>Settings</h2>
      <div class="grid">
        <label>
          Hook URL (each turn is POSTed here, signed)
          <input type="url" value={hookUrl} onInput={(e) => setHookUrl(e.currentTarget.value)} />
        </label>
        <label>
          Transcript hook URL (optional)
          <input type="url" value={transcriptUrl} onInput={(e) => setTranscriptUrl(e.currentTarget.value)} />
        </label>
        <label>
          Environment
          <select
            value={environment}
            onChange={(e) => setEnvironment(e.currentTarget.value as Deployment['environment'])}
          >
            <option value="production">production</option>
            <option value="staging">staging</option>
            <option value="development">development</option>
          </select>
        </label>
        <label>
          Who speaks first
          <select
            value={direction}
            onChange={(e) => setDirection(e.currentTarget.value as Deployment['call_direction'])}
          >
            <option value="inbound">The visitor (inbound)</option>
            <option value="outbound">The agent's greeting (outbound)</option>
          </select>
        </label>
        <label>
          Agent version
          <select value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
            <option value="">Latest published</option>
            {versions.data?.data.map((v) => (
              <option key={v.version} value={v.version}>
                Pinned to v{v.version}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label>
        Allowed origins (one per line, e.g. https://www.example.com)
        <textarea rows={3} value={origins} onInput={(e) => setOrigins(e.currentTarget.value)} />
      </label>
      {problems.map((p) => (
        <p key={p} class="warn">
          {p}
        </p>
      ))}
      <fieldset>
        <legend>Widget theme</legend>
        <div class="grid">
          <label>
            Title
            <input value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
          </label>
          <label>
            Accent colour
            <input type="color" value={accent} onInput={(e) => setAccent(e.currentTarget.value)} />
          </label>
          <label>
            Position
            <select value={position} onChange={(e) => setPosition(e.currentTarget.value)}>
              <option value="bottom-right">bottom-right</option>
              <option value="bottom-left">bottom-left</option>
            </select>
          </label>
        </div>
        <label>
          Languages in the widget's menu (such as de-DE, one per line; two or more show the menu, and the visitor's
          choice is each turn's language)
          <textarea rows={3} value={languages} onInput={(e) => setLanguages(e.currentTarget.value)} />
        </label>
        {languageProblems(languageList).map((p) => (
          <p key={p} class="warn">
            {p}
          </p>
        ))}
        <div class="filters">
          <label>
            Preview the widget's words in
            <select value={previewLocale} onChange={(e) => setPreviewLocale(e.currentTarget.value)}>
              <LocaleOptions />
            </select>
          </label>
          <a href={`#/try/${dep.id}/${previewLocale}`}>Open the preview in Try it</a>
        </div>
        <div class={`preview preview-${position}`} aria-label="Theme preview">
          <div class="preview-panel">
            <div class="preview-head" ref={(el) => el?.style.setProperty('background', accent)}>
              {title || dep.agent_name}
            </div>
            <p>Hello! How can I help?</p>
          </div>
          <span class="preview-launcher" ref={(el) => el?.style.setProperty('background', accent)} />
        </div>
      </fieldset>
      <fieldset>
        <legend>Engagement and timeouts</legend>
        <div class="grid">
          <label>
            Turns per conversation (default 200)
            <input type="number" min={1} value={maxTurns} onInput={(e) => setMaxTurns(e.currentTarget.value)} />
          </label>
          <label>
            Turns per minute (default 20)
            <input type="number" min={1} value={perMinute} onInput={(e) => setPerMinute(e.currentTarget.value)} />
          </label>
          <label>
            Hook timeout, ms (500–15000, default 5000)
            <input
              type="number"
              min={500}
              max={15000}
              value={hookTimeout}
              onInput={(e) => setHookTimeout(e.currentTarget.value)}
            />
          </label>
          <label>
            Reply timeout, s (5–3600, default 120)
            <input
              type="number"
              min={5}
              max={3600}
              value={replyTimeout}
              onInput={(e) => setReplyTimeout(e.currentTarget.value)}
            />
          </label>
          <label>
            Speech recognition
            <select value={recognition} onChange={(e) => setRecognition(e.currentTarget.value)}>
              <option value="auto">Automatic</option>
              <option value="browser">The browser's only</option>
              <option value="service">The service's</option>
              <option value="off">Off: text only</option>
            </select>
          </label>
          <label>
            The agent's voice
            <select value={synthesis} onChange={(e) => setSynthesis(e.currentTarget.value)}>
              <option value="auto">Automatic</option>
              <option value="service">The service's</option>
              <option value="browser">The browser's</option>
              <option value="off">Off: shown, never spoken</option>
            </select>
          </label>
        </div>
        <p class="muted">
          Automatic recognition is the browser's where it has its own (Chrome), else the service's (the visitor's audio
          streamed to it). The automatic voice is the service's where it has one (espeak-ng, or a speech server such as
          Kokoro or Piper, the same in every browser, and it knows what each visitor heard), else the browser's.
        </p>
        <VoiceSample agentId={dep.agent_id} />
      </fieldset>
      <fieldset>
        <legend>When a visitor waits for a person</legend>
        <p class="muted">
          A visitor who asked for a person (or whom your hook handed over) and whom nobody has taken over yet is told
          once, after this wait. The Inbox shows the request ageing meanwhile.
        </p>
        <div class="grid">
          <label>
            Tell them after, s (0 never; default 300)
            <input
              type="number"
              min={0}
              max={86400}
              value={waitNoticeS}
              onInput={(e) => setWaitNoticeS(e.currentTarget.value)}
            />
          </label>
        </div>
        <label>
          What they are told (empty: the widget's own words in their language, saying nobody is free yet and their
          message is kept)
          <textarea
            rows={2}
            maxLength={1000}
            value={waitNotice}
            onInput={(e) => setWaitNotice(e.currentTarget.value)}
          />
        </label>
      </fieldset>
      <ErrorNote error={save.error} />
      {warnings.map((w) => (
        <p key={w.path} class="warn">
          <code>{w.path}</code>: {w.message}
        </p>
      ))}
      <button type="submit" disabled={save.busy}>
        Save settings
      </button>
    </ActionForm>
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
