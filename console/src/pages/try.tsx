import { useEffect, useState } from 'preact/hooks';
import { get, list, post, path } from '../api';
import { specVariables } from '#protocol/templates';
import type { Deployment, PreviewToken } from '../types';
import { variableSource } from './agent-guardrails';
import { nestedValues, type Played } from '../spec-fields';
import { DeploymentOptions, Empty, ErrorNote, Loading, LocaleOptions, Title, useLoad } from '../ui';
import { loadConversation, Timeline } from './conversations';

interface ConciergeApi {
  init(o: { deploymentId: string; getToken(): Promise<string>; open?: boolean; locale?: string }): void;
  on(name: 'ready', handler: (e: { conversationId: string }) => void): void;
  on(name: 'listening', handler: (e: { frame: ListeningFrame }) => void): void;
  close(): void;
  greet(ruleId: string): void;
  setContext(data: Record<string, unknown>): void;
  destroy(): void;
}
declare global {
  interface Window {
    Concierge?: ConciergeApi;
  }
}

/** What the service tells a hands-free widget of its open mic (README, Hands-free voice). */
type ListeningFrame =
  | { type: 'speech_started' | 'speech_stopped' }
  | { type: 'transcript_partial'; text: string }
  | { type: 'interrupt' | 'resume'; turn_id: string }
  | { type: 'listening_stopped'; reason: string };

/** The open mic's last news, in words. */
export function listeningInWords(frame: ListeningFrame): string {
  switch (frame.type) {
    case 'speech_started':
      return 'Hearing the visitor';
    case 'speech_stopped':
      return 'The visitor paused; waiting to see if the turn is over';
    case 'transcript_partial':
      return `Heard so far: “${frame.text}”`;
    case 'interrupt':
      return 'The visitor spoke over the agent: its voice stopped';
    case 'resume':
      return 'Not an interruption: the voice came back';
    case 'listening_stopped':
      return `The mic closed (${frame.reason})`;
  }
}

/** The real widget bundle, loaded once from this service like a customer's page does. */
function loadWidget(): Promise<ConciergeApi> {
  if (window.Concierge && 'init' in window.Concierge) return Promise.resolve(window.Concierge);
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = '/widget/concierge.js';
    script.onload = () =>
      window.Concierge ? resolve(window.Concierge) : reject(new Error('The widget did not start'));
    script.onerror = () => reject(new Error('The widget bundle could not be loaded from /widget/concierge.js'));
    document.head.appendChild(script);
  });
}

/** The conversation's hook calls, acknowledgements, replies and transcript events, refreshed each second. */
function LiveTimeline({ conversationId }: { conversationId: string }) {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  const loaded = useLoad(() => loadConversation(conversationId), [conversationId, tick]);
  if (!loaded.data) return <ErrorNote error={loaded.error} />;
  return (
    <Timeline
      conversation={loaded.data.conversation}
      transcript={loaded.data.transcript}
      onRedelivered={loaded.reload}
    />
  );
}

/**
 * A deployment's greeting rules (README, Greeting visitors first), each teaser shown on demand:
 * the widget closes and greets as it would a visitor whose page meets the rule.
 */
function GreetingPreview({ deployment }: { deployment: Deployment | undefined }) {
  const rules = ((deployment?.engagement_rules as { proactive?: { id: string }[] } | undefined)?.proactive ?? []).map(
    (r) => r.id,
  );
  const [rule, setRule] = useState('');
  if (!rules.length) return null;
  const chosen = rules.includes(rule) ? rule : rules[0]!;
  return (
    <div class="filters">
      <label>
        Greeting
        <select value={chosen} onChange={(e) => setRule(e.currentTarget.value)}>
          {rules.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        onClick={() => {
          window.Concierge?.close();
          window.Concierge?.greet(chosen);
        }}
      >
        Show its teaser
      </button>
    </div>
  );
}

/** The variables of the deployment's agent a visitor brings (their name, the token's ctx, the page's context), to fill in before a try. */
function VariablesToPlay({
  deployment,
  onStart,
}: {
  deployment: Deployment | undefined;
  onStart(played: Played): void;
}) {
  const spec = useLoad(
    () =>
      deployment
        ? get<{ agent_spec: Record<string, unknown> | null }>(path`/api/v1/agents/${deployment.agent_id}/spec`)
        : Promise.resolve(undefined),
    [deployment?.agent_id],
  );
  const [played, setPlayed] = useState<Played>({});
  const brought = specVariables(spec.data?.agent_spec ?? {}).filter(
    (v) => v.name === 'visitor.name' || v.name.startsWith('ctx.') || v.name.startsWith('page.context.'),
  );
  if (!brought.length) return null;
  return (
    <form
      class="variables-to-play"
      onSubmit={(e) => {
        e.preventDefault();
        onStart(played);
      }}
    >
      <h2>The visitor's variables</h2>
      <p class="muted">The published agent uses these: fill them in as your site would, then start a conversation.</p>
      <div class="grid">
        {brought.map((v) => (
          <label key={v.name}>
            <code>{v.name}</code> from {variableSource(v.name)}
            <input
              value={played[v.name] ?? ''}
              placeholder={v.fallback ? `default: ${v.fallback}` : '(empty)'}
              onInput={(e) => {
                const value = e.currentTarget.value;
                setPlayed((now) => ({ ...now, [v.name]: value }));
              }}
            />
          </label>
        ))}
      </div>
      <button type="submit">Start a conversation with these values</button>
    </form>
  );
}

/** `locale`: the widget's words in it (a preview of that locale); without it, the browser's languages choose. */
export function TryIt({ deploymentId, locale }: { deploymentId: string | undefined; locale: string | undefined }) {
  const active = useLoad(() => list<Deployment>(path`/api/v1/deployments?status=active&per_page=100`), []);
  const chosen = deploymentId ?? active.data?.data[0]?.id;
  const [conversationId, setConversationId] = useState<string>();
  const [mic, setMic] = useState('');
  const [error, setError] = useState<unknown>();
  const [played, setPlayed] = useState<{ values: Played; at: number }>({ values: {}, at: 0 });
  useEffect(() => {
    if (!chosen) return;
    let widget: ConciergeApi | undefined;
    // The widget belongs to this page: one that finishes loading after the page was left never starts.
    let left = false;
    setConversationId(undefined);
    setMic('');
    loadWidget().then((w) => {
      if (left) return;
      widget = w;
      const name = played.values['visitor.name']?.trim();
      const ctx = nestedValues(played.values, 'ctx.');
      const context = nestedValues(played.values, 'page.context.');
      const getToken = async () =>
        (
          await post<PreviewToken>(path`/api/v1/deployments/${chosen}/preview-token`, {
            ...(name ? { name } : {}),
            ...(ctx ? { ctx } : {}),
          })
        ).token;
      // Played values start a conversation of their own: the widget forgets the one it would resume
      // (its session memory, `concierge:{deployment}`), whose visitor the service already knows.
      if (played.at) sessionStorage.removeItem(`concierge:${chosen}`);
      w.init({ deploymentId: chosen, open: true, getToken, ...(locale ? { locale } : {}) });
      if (context) w.setContext(context);
      w.on('ready', (e) => setConversationId(e.conversationId));
      w.on('listening', (e) => !left && setMic(listeningInWords(e.frame)));
    }, setError);
    return () => {
      left = true;
      widget?.destroy();
    };
  }, [chosen, locale, played.at]);
  return (
    <section class="try">
      <Title>Try it</Title>
      <p>
        The real widget, on this page, with a ten-minute preview token. Each turn goes to your hook (or your agent's
        model); its timeline fills in beside it.
      </p>
      {active.loading && <Loading what="active deployments" />}
      <ErrorNote error={active.error ?? error} />
      {active.data?.data.length === 0 && (
        <Empty>
          No active deployment to try. <a href="#/deployments">Activate one</a> first.
        </Empty>
      )}
      {!!active.data?.data.length && (
        <div class="filters">
          <label>
            Deployment
            <select
              value={chosen}
              onChange={(e) => (location.hash = `#/try/${e.currentTarget.value}${locale ? `/${locale}` : ''}`)}
            >
              <DeploymentOptions deployments={active.data.data} />
            </select>
          </label>
          <label>
            Widget's words
            <select
              value={locale ?? ''}
              onChange={(e) =>
                (location.hash = `#/try/${chosen}${e.currentTarget.value ? `/${e.currentTarget.value}` : ''}`)
              }
            >
              <option value="">As the visitor's browser asks</option>
              <LocaleOptions />
            </select>
          </label>
        </div>
      )}
      <GreetingPreview deployment={active.data?.data.find((d) => d.id === chosen)} />
      <VariablesToPlay
        deployment={active.data?.data.find((d) => d.id === chosen)}
        onStart={(values) => setPlayed({ values, at: Date.now() })}
      />
      {mic && (
        <p class="hands-free" role="status">
          Hands-free: {mic}
        </p>
      )}
      <h2>Timeline</h2>
      {conversationId ? (
        <LiveTimeline conversationId={conversationId} />
      ) : (
        chosen && <p class="muted">Waiting for the widget to open its conversation…</p>
      )}
    </section>
  );
}
