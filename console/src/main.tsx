import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { armChime, chime, onActivity } from './activity';
import { api, curlOf, get, isId, onLogChange, path, sentLog, whenSignedOut } from './api';
import { routeOf } from './routes';
import { AgentPage, AgentsPage } from './pages/agents';
import { AnalyticsPage } from './pages/analytics';
import { ApiKeyPage } from './pages/api-key';
import { SignIn, Welcome } from './pages/auth';
import { ConversationPage, ConversationsPage } from './pages/conversations';
import { DeploymentPage, DeploymentsPage } from './pages/deployments';
import type { Handoff } from './inbox';
import { InboxPage } from './pages/inbox';
import { ModelEndpointsPage } from './pages/models';
import { KnowledgeBasePage, KnowledgeBasesPage } from './pages/knowledge';
import { GettingStarted, Home } from './pages/start';
import { TryIt } from './pages/try';
import { UsersPage } from './pages/users';
import { AuditPage } from './pages/audit';
import { can, currentRole, type Role, SECTION_ROLES, signedInAs } from './roles';
import type { ConsoleUser } from './types';
import { CodeBlock, ErrorNote, Title, useLoad } from './ui';

const NAV = [
  ['start', 'Getting started'],
  ['agents', 'Agents'],
  ['deployments', 'Deployments'],
  ['models', 'Model endpoints'],
  ['knowledge', 'Knowledge'],
  ['try', 'Try it'],
  ['inbox', 'Inbox'],
  ['conversations', 'Conversations'],
  ['analytics', 'Analytics'],
  ['api-key', 'API key'],
  ['users', 'Users'],
  ['audit', 'Audit log'],
] as const;

function useRoute(): string[] {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const changed = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

const LOCALE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/**
 * The page a route names. An id or locale read from the address is checked here, before any page
 * uses it, so a crafted link (`#/try/..%2Fsettings%2F...`) shows Not found and sends nothing.
 */
function page(route: string[]) {
  const [section = '', id, sub, ...rest] = route;
  const idOk = id === undefined || isId(id);
  const subOk = sub === undefined || (section === 'try' && LOCALE.test(sub));
  if (!idOk || !subOk || rest.length) return <NotFound />;
  const needed = SECTION_ROLES[section];
  if (needed && !can(needed)) return <NotForRole needed={needed} />;
  switch (section) {
    case '':
    case 'sign-in':
      return <Home />;
    case 'start':
      return <GettingStarted />;
    case 'agents':
      return id ? <AgentPage id={id} /> : <AgentsPage />;
    case 'deployments':
      return id ? <DeploymentPage id={id} /> : <DeploymentsPage />;
    case 'try':
      return <TryIt deploymentId={id} locale={sub} />;
    case 'inbox':
      return <InboxPage id={id} />;
    case 'conversations':
      return id ? <ConversationPage id={id} /> : <ConversationsPage />;
    case 'models':
      return <ModelEndpointsPage />;
    case 'knowledge':
      return id ? <KnowledgeBasePage id={id} /> : <KnowledgeBasesPage />;
    case 'analytics':
      return <AnalyticsPage />;
    case 'api-key':
      return <ApiKeyPage />;
    case 'users':
      return <UsersPage />;
    case 'audit':
      return <AuditPage />;
    default:
      return <NotFound />;
  }
}

function NotForRole({ needed }: { needed: Role }) {
  return (
    <section>
      <Title>Not for your role</Title>
      <p>
        This page needs the {needed} role or above; you are an {currentRole()}. An admin of your team can change your
        role under Users. <a href="#/">Back to the console's home</a>.
      </p>
    </section>
  );
}

function NotFound() {
  return (
    <section>
      <Title>Not found</Title>
      <p>
        There is no page here. <a href="#/">Back to the console's home</a>.
      </p>
    </section>
  );
}

/** The requests this tab made, each as a curl command with the key as a placeholder. */
function RequestLog({ onClose }: { onClose(): void }) {
  const [, redraw] = useState(0);
  useEffect(() => onLogChange(() => redraw((n) => n + 1)), []);
  return (
    <aside class="log" aria-label="Requests as curl">
      <header>
        <h2>Requests as curl</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      {sentLog.length === 0 && <p class="muted">Requests this page makes appear here.</p>}
      {sentLog.map((s) => (
        <CodeBlock
          key={s.at + s.path}
          label={`${s.method} ${s.path} → ${s.status ?? '…'}${s.ms !== undefined ? ` (${s.ms} ms)` : ''}`}
          code={curlOf(s.method, s.path, s.body, location.origin, s.file)}
        />
      ))}
    </aside>
  );
}

/**
 * Wherever the person is in the console: a conversation that starts needing a person is said at
 * once, visibly and (after their first click or key, as browsers require) with a chime.
 */
function NeedsPersonNotice() {
  const [waiting, setWaiting] = useState<Handoff[]>([]);
  useEffect(() => {
    armChime();
    const told = new Set<string>();
    return onActivity((m) => {
      if (m.kind !== 'handoff') return;
      const h = m.handoff;
      if (!h.needs_person) {
        told.delete(h.conversation_id);
        setWaiting((all) => all.filter((w) => w.conversation_id !== h.conversation_id));
      } else if (!told.has(h.conversation_id)) {
        told.add(h.conversation_id);
        setWaiting((all) => [...all, h]);
        chime();
      }
    });
  }, []);
  if (!waiting.length) return null;
  return (
    <div class="notices" role="alert">
      {waiting.map((w) => (
        <p key={w.conversation_id} class="warn">
          A visitor needs a person{w.reason ? `: ${w.reason}` : ''}.{' '}
          <a href={`#/inbox/${w.conversation_id}`}>Open it in the inbox</a>{' '}
          <button type="button" class="small" onClick={() => setWaiting((all) => all.filter((x) => x !== w))}>
            Dismiss
          </button>
        </p>
      ))}
    </div>
  );
}

function Console() {
  const route = useRoute();
  const [user, setUser] = useState<ConsoleUser | null | undefined>(undefined);
  const signedIn = user === undefined ? undefined : user !== null;
  const [showLog, setShowLog] = useState(false);
  const [signOutError, setSignOutError] = useState<unknown>();
  const refresh = () => get<ConsoleUser | null>(path`/console/session`).then(setUser, () => setUser(null));

  useEffect(() => {
    whenSignedOut(() => setUser(null));
    void refresh();
  }, []);
  // Focus the page's heading on navigation, so screen readers and keyboards start at the top.
  useEffect(() => {
    (document.querySelector('main h1') as HTMLElement | null)?.focus();
  }, [route.join('/'), signedIn]);

  if (route[0] === 'welcome') return <Welcome token={route[1] ?? ''} onDone={refresh} />;
  if (signedIn === undefined) return <main class="center" aria-busy="true" />;
  if (!signedIn) return <SignIn onDone={refresh} refused={route[0] === 'sign-in' ? route[1] : undefined} />;
  signedInAs(user!.role);
  const signOut = async () => {
    try {
      await api('DELETE', path`/console/session`);
      setUser(null);
    } catch (err) {
      setSignOutError(err);
    }
  };
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Concierge</span>
        <button type="button" class="small" aria-expanded={showLog} onClick={() => setShowLog(!showLog)}>
          curl
        </button>
        <span class="muted">
          {user?.email} ({user?.role})
        </span>
        {user?.single_sign_on === 'linkable' && <LinkProvider />}
        <button type="button" class="small" onClick={signOut}>
          Sign out
        </button>
      </header>
      {/* The sections down the side, each on one line however many there are; along the top on a narrow screen. */}
      <div class="shell">
        <nav aria-label="Sections" class="side">
          {NAV.filter(([section]) => can(SECTION_ROLES[section]!)).map(([path, label]) => (
            <a
              key={path}
              href={`#/${path}`}
              aria-current={route[0] === path || (!route[0] && path === 'start') ? 'page' : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <div>
          <NeedsPersonNotice />
          <main id="main" tabIndex={-1}>
            <ErrorNote error={signOutError} />
            {page(route)}
          </main>
        </div>
      </div>
      {showLog && <RequestLog onClose={() => setShowLog(false)} />}
    </>
  );
}

/** A signed-in person whose team takes single sign-on for their address links the identity provider: it signs them in from then on. */
function LinkProvider() {
  const sso = useLoad(() => get<{ enabled: boolean; name: string | null }>(path`/console/sso`), []);
  if (!sso.data?.name) return null;
  return (
    <a class="button small" href="/console/sso/start?link=1">
      Link {sso.data.name}
    </a>
  );
}

render(<Console />, document.getElementById('app')!);
