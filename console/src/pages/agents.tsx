import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, del, get, list, post, put, query, path } from '../api';
import { inLanguage, type InLanguages } from '#protocol/in-language';
import { when } from '../format';
import { inLanguagesLines, inLanguagesOf, pronunciationsAsLines, pronunciationsOf, toolsOf } from '../spec-fields';
import { lineDiff } from '../text-diff';
import type {
  Agent,
  AgentTest,
  AgentVersion,
  Job,
  JobAccepted,
  KnowledgeBase,
  ModelEndpoint,
  ModelResponderDraft,
  TestRun,
} from '../types';
import {
  ActionForm,
  Badge,
  Empty,
  ErrorNote,
  InLanguagesField,
  ListTable,
  Loading,
  Title,
  useAction,
  useLoad,
  VoiceSample,
} from '../ui';
import { TurnTakingEditor } from './agent-turn-taking';
import { AgentTests } from './agent-tests';
import { AnalysisEditor } from './agent-analysis';
import { GuardrailsEditor, VariablesUsed } from './agent-guardrails';

const STATUSES = ['generating', 'draft', 'published', 'failed'] as const;

function CreateAgent({ onCreated }: { onCreated(): void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [job, setJob] = useState<Job>();
  const action = useAction(async () => {
    const accepted = await post<JobAccepted>(path`/api/v1/agents`, { name, ...(description ? { description } : {}) });
    // Generation runs in the background: its progress, polled until it ends.
    for (;;) {
      const now = await get<Job>(path`/api/v1/jobs/${accepted.job_id}/status`);
      setJob(now);
      if (now.status === 'succeeded' || now.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 400));
    }
    setName('');
    setDescription('');
    onCreated();
  });
  return (
    <ActionForm onRun={() => void action.start()}>
      <h2>New agent</h2>
      <label>
        Name
        <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description (what it should know and do; generation starts from it)
        <textarea
          maxLength={4000}
          rows={3}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
      </label>
      <ErrorNote error={action.error} />
      {job && (
        <p role="status">
          Generation {job.status}: <progress max={100} value={job.progress} aria-label="Generation progress" />{' '}
          {job.progress}%{job.error ? `: ${job.error}` : ''}
        </p>
      )}
      <button type="submit" class="primary" disabled={action.busy}>
        Create agent
      </button>
    </ActionForm>
  );
}

export function AgentsPage() {
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const agents = useLoad(
    () => list<Agent>(path`/api/v1/agents${query({ search, status, page })}`),
    [search, status, page],
  );
  return (
    <section>
      <Title>Agents</Title>
      <CreateAgent onCreated={agents.reload} />
      <div class="filters" role="search">
        <label>
          Search
          <input type="search" value={search} onInput={(e) => (setSearch(e.currentTarget.value), setPage(1))} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => (setStatus(e.currentTarget.value), setPage(1))}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <ListTable
        what="Agents"
        loaded={agents}
        onPage={setPage}
        empty={search || status ? 'No agent matches these filters.' : 'No agent yet: create your first one above.'}
        columns={[
          { label: 'Name', cell: (a) => <a href={`#/agents/${a.id}`}>{a.name}</a> },
          { label: 'Status', cell: (a) => <Badge value={a.status} /> },
          { label: 'Version', cell: (a) => a.version || '—' },
          { label: 'Updated', cell: (a) => when(a.updated_at) },
        ]}
      />
    </section>
  );
}

type Spec = Record<string, unknown>;
const pretty = (v: unknown) => JSON.stringify(v ?? {}, null, 2);
const linesOf = (v: unknown): string => (Array.isArray(v) ? v.join('\n') : typeof v === 'string' ? v : '');

/** A tools list as JSON text for its editor: empty for none. */
const toolsText = (v: unknown): string => (Array.isArray(v) && v.length ? pretty(v) : '');

/** A list of tools as JSON, each problem said under it; the spec takes the list only once it has none. */
function ToolsField(props: {
  label: string;
  where: 'server' | 'page';
  initial: unknown;
  placeholder?: string;
  onList(list: unknown[] | undefined): void;
}) {
  const [text, setText] = useState(toolsText(props.initial));
  const { problems } = toolsOf(text, props.where);
  return (
    <>
      <label>
        {props.label}
        <textarea
          class="mono"
          rows={props.where === 'server' ? 6 : 3}
          value={text}
          aria-invalid={problems.length > 0}
          placeholder={props.placeholder}
          onInput={(e) => {
            setText(e.currentTarget.value);
            const read = toolsOf(e.currentTarget.value, props.where);
            if (!read.problems.length) props.onList(read.list.length ? read.list : undefined);
          }}
        />
      </label>
      {problems.map((p) => (
        <p key={p} class="warn">
          {p}
        </p>
      ))}
    </>
  );
}

/** A field of a model responder the form edits. */
type ModelField = Exclude<keyof ModelResponderDraft, 'type'>;
/** The draft's responder as the form reads it: a model's fields, a knowledge base's or the hook's type. */
type DraftResponder = Partial<Omit<ModelResponderDraft, 'type'>> & { type?: 'hook' | 'model' | 'knowledge' };

/**
 * Who answers the agent's turns (README, An agent without a server): the customer's server through
 * the hook, or a model on one of their endpoints, with its instructions and tools.
 */
function ResponderEditor({ spec, set }: { spec: Spec | undefined; set(key: string, value: unknown): void }) {
  // A draft may hold anything: each field is checked where it is read, and a publish checks the whole.
  const responder = (spec?.responder ?? { type: 'hook' }) as DraftResponder;
  const isModel = responder.type === 'model';
  const endpoints = useLoad(() => list<ModelEndpoint>(path`/api/v1/model-endpoints?per_page=100`), []);
  const setField = <K extends ModelField>(key: K, value: ModelResponderDraft[K] | '') =>
    set('responder', { ...responder, [key]: value === '' || value === undefined ? undefined : value });
  const str = (key: 'endpoint_id' | 'model' | 'fallback_model') => {
    const value = responder[key];
    return typeof value === 'string' ? value : '';
  };
  return (
    <fieldset>
      <legend>Who answers</legend>
      <label>
        Answers come from
        <select
          value={isModel ? 'model' : responder.type === 'knowledge' ? 'knowledge' : 'hook'}
          disabled={!spec}
          onChange={(e) => {
            const to = e.currentTarget.value;
            set(
              'responder',
              to === 'model'
                ? {
                    type: 'model',
                    model: '',
                    ...(endpoints.data?.data[0] ? { endpoint_id: endpoints.data.data[0].id } : {}),
                  }
                : to === 'knowledge'
                  ? { type: 'knowledge' }
                  : undefined,
            );
          }}
        >
          <option value="hook">Your server (the deployment's hook)</option>
          <option value="model">A language model (no server needed)</option>
          <option value="knowledge">Your knowledge base (no model, no server)</option>
        </select>
      </label>
      {responder.type === 'knowledge' && (
        <p class="muted">
          It answers with the best passage's most relevant sentences and a link to their source, from the knowledge base
          chosen above; otherwise it says it does not know and offers a person.
        </p>
      )}
      {isModel && (
        <>
          <div class="grid">
            <label>
              Model endpoint
              <select value={str('endpoint_id')} onChange={(e) => setField('endpoint_id', e.currentTarget.value)}>
                <option value="">The service's model (MODEL_URL)</option>
                {endpoints.data?.data.map((endpoint) => (
                  <option key={endpoint.id} value={endpoint.id} title={endpoint.base_url}>
                    {endpoint.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Model
              <input
                required
                placeholder="gpt-4o-mini"
                value={str('model')}
                onInput={(e) => setField('model', e.currentTarget.value)}
              />
            </label>
            <label>
              Fallback model (optional)
              <input value={str('fallback_model')} onInput={(e) => setField('fallback_model', e.currentTarget.value)} />
            </label>
            <label>
              Temperature (0–2, optional)
              <input
                type="number"
                min={0}
                max={2}
                step={0.1}
                value={typeof responder.temperature === 'number' ? responder.temperature : ''}
                onInput={(e) => setField('temperature', e.currentTarget.value ? Number(e.currentTarget.value) : '')}
              />
            </label>
          </div>
          <p class="muted">
            No endpoint yet? <a href="#/models">Add one</a>.
          </p>
          <label>
            Instructions: what the agent knows and how it answers, one a line
            <textarea
              rows={5}
              value={linesOf(spec?.instructions)}
              onInput={(e) => set('instructions', e.currentTarget.value.split('\n'))}
            />
          </label>
          <ToolsField
            label="Tools your server runs (JSON: name, description, parameters as a JSON Schema, url, optional filler)"
            where="server"
            initial={responder.tools}
            placeholder='[{"name": "check_room", "description": "Whether a room is free", "parameters": {"type": "object", "properties": {"night": {"type": "string"}}}, "url": "https://my-hotel.example/tools"}]'
            onList={(list) => setField('tools', list as ModelResponderDraft['tools'])}
          />
          <ToolsField
            label="Tools the visitor's page runs (client actions; JSON: name, description, parameters)"
            where="page"
            initial={responder.client_tools}
            onList={(list) => setField('client_tools', list as ModelResponderDraft['client_tools'])}
          />
          <p class="muted">
            Built in: the model can hand the conversation to a person and end it. Try it shows each model and tool call.
          </p>
        </>
      )}
    </fieldset>
  );
}

/** A spec's greeting as the form shows it: its text, or a line per language. */
const greetingLines = (spec: Spec | null | undefined) =>
  typeof spec?.greeting === 'string' || (spec?.greeting && typeof spec.greeting === 'object')
    ? inLanguagesLines(spec.greeting as InLanguages)
    : '';

/** The draft: the fields the concierge reads as a form, the whole object as JSON; each edits the other. */
function DraftEditor({ agent, onSaved }: { agent: Agent; onSaved(a: Agent): void }) {
  const [raw, setRaw] = useState(pretty(agent.draft_spec));
  let spec: Spec | undefined;
  let problem = '';
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) spec = parsed as Spec;
    else problem = 'The draft must be a JSON object';
  } catch (err) {
    problem = `Not valid JSON: ${(err as Error).message}`;
  }
  const voice = (spec?.voice ?? {}) as Spec;
  const service = (voice.service ?? {}) as Spec;
  const set = (key: string, value: unknown) => spec && setRaw(pretty({ ...spec, [key]: value }));
  // The service's voice (README, The agent's own voice): an id on the operator's synthesiser, and its pace.
  const setService = (key: string, value: unknown) => {
    const next = { ...service, [key]: value === '' ? undefined : value };
    set('voice', { ...voice, service: next.voice || next.speed ? next : undefined });
  };
  const [sayings, setSayings] = useState(pronunciationsAsLines(spec?.pronunciations));
  const [greeting, setGreeting] = useState(greetingLines(spec));
  // Another version of the agent (saved, published) resets the form; the first render is already it, and an
  // edit made before the effect runs (a fast hand, a busy machine) is kept.
  const shown = useRef(`${agent.id} ${agent.updated_at}`);
  useEffect(() => {
    const version = `${agent.id} ${agent.updated_at}`;
    if (version === shown.current) return;
    shown.current = version;
    setRaw(pretty(agent.draft_spec));
    setSayings(pronunciationsAsLines(agent.draft_spec?.pronunciations));
    setGreeting(greetingLines(agent.draft_spec));
  }, [agent.id, agent.updated_at]);
  const read = pronunciationsOf(sayings);
  const save = useAction(async () =>
    onSaved((await put<Agent>(path`/api/v1/agents/${agent.id}`, { draft_spec: spec })).data),
  );
  const text = (key: string) => (typeof spec?.[key] === 'string' ? (spec[key] as string) : '');
  return (
    <ActionForm onRun={() => void save.start()}>
      <h2>Draft</h2>
      <div class="grid">
        <InLanguagesField
          wide
          label="Greeting (the widget's welcome line; said first when the deployment's conversations are outbound)"
          value={greeting}
          disabled={!spec}
          onInput={(text) => {
            setGreeting(text);
            const read = inLanguagesOf(text);
            if ('value' in read) set('greeting', read.value || undefined);
          }}
        />
        <label>
          Language it speaks and listens in (such as en-US or de-DE)
          <input
            value={text('language')}
            placeholder="en-US"
            disabled={!spec}
            onInput={(e) => set('language', e.currentTarget.value)}
          />
        </label>
        <label>
          Browser voice (one the visitor's browser has, by name; empty: its best for the language)
          <input
            value={typeof voice.name === 'string' ? voice.name : ''}
            disabled={!spec}
            onInput={(e) => set('voice', { ...voice, name: e.currentTarget.value })}
          />
        </label>
        <label>
          Service voice (its name on your speech server, such as af_heart; for espeak-ng a language, such as en-us)
          <input
            value={typeof service.voice === 'string' ? service.voice : ''}
            disabled={!spec}
            onInput={(e) => setService('voice', e.currentTarget.value)}
          />
        </label>
        <label>
          Service voice speed (0.5–2, default 1)
          <input
            type="number"
            min={0.5}
            max={2}
            step={0.05}
            value={typeof service.speed === 'number' ? service.speed : ''}
            disabled={!spec}
            onInput={(e) => setService('speed', e.currentTarget.value ? Number(e.currentTarget.value) : '')}
          />
        </label>
      </div>
      <ResponderEditor key={`${agent.id}-${agent.updated_at}`} spec={spec} set={set} />
      <VariablesUsed spec={spec} />
      <GuardrailsEditor key={`g-${agent.id}-${agent.updated_at}`} spec={spec} set={set} />
      <label>
        Pronunciations: one a line, term = how to say it, [de] after for one language only (said by either voice, never
        shown)
        <textarea
          rows={3}
          value={sayings}
          disabled={!spec}
          placeholder="Adlon = Ad-lonn"
          onInput={(e) => {
            setSayings(e.currentTarget.value);
            const { list, problems } = pronunciationsOf(e.currentTarget.value);
            if (!problems.length) set('pronunciations', list.length ? list : undefined);
          }}
        />
      </label>
      {read.problems.map((p) => (
        <p key={p} class="warn">
          {p}
        </p>
      ))}
      <VoiceSample
        agentId={agent.id}
        trying={{
          ...(spec?.greeting ? { text: inLanguage(spec.greeting as InLanguages, [text('language')]) } : {}),
          ...(service.voice ? { voice: service } : {}),
          pronunciations: read.list,
        }}
      />
      <TurnTakingEditor
        voice={voice}
        disabled={!spec}
        onChange={(next) => set('voice', Object.keys(next).length ? next : undefined)}
      />
      <AnalysisEditor key={`${agent.id}-${agent.updated_at}`} spec={spec} set={set} />
      <label>
        Draft as JSON
        <textarea
          class="mono"
          rows={12}
          value={raw}
          aria-invalid={!!problem}
          onInput={(e) => {
            setRaw(e.currentTarget.value);
            try {
              setSayings(pronunciationsAsLines((JSON.parse(e.currentTarget.value) as Spec).pronunciations));
            } catch {
              // Not JSON yet: the pronunciations keep what they showed.
            }
          }}
        />
      </label>
      {problem && <p class="warn">{problem}</p>}
      <ErrorNote error={save.error} />
      <button type="submit" disabled={!!problem || save.busy || agent.status === 'generating'}>
        Save draft
      </button>
    </ActionForm>
  );
}

/** The agent's knowledge base (README, Answers from your documents): an agent field, in effect from the next turn. */
function KnowledgeBasePicker({ agent, onSaved }: { agent: Agent; onSaved(a: Agent): void }) {
  const bases = useLoad(() => list<KnowledgeBase>(path`/api/v1/knowledge-bases?per_page=100`), []);
  const save = useAction(async (id: string) =>
    onSaved((await put<Agent>(path`/api/v1/agents/${agent.id}`, { knowledge_base_id: id || null })).data),
  );
  return (
    <section class="card">
      <label>
        Knowledge base: its best passages go with every turn (to your hook, the model, or the knowledge base answering)
        <select
          value={agent.knowledge_base_id ?? ''}
          disabled={save.busy}
          onChange={(e) => void save.start(e.currentTarget.value)}
        >
          <option value="">None</option>
          {bases.data?.data.map((base) => (
            <option key={base.id} value={base.id}>
              {base.name}
            </option>
          ))}
        </select>
      </label>
      <p class="muted">
        <a href="#/knowledge">Knowledge</a>: make a base, add your pages and files, and see what a question finds.
      </p>
      <ErrorNote error={save.error ?? bases.error} />
    </section>
  );
}

function Versions({ agent }: { agent: Agent }) {
  const versions = useLoad(
    () => list<AgentVersion>(path`/api/v1/agents/${agent.id}/versions?per_page=100`),
    [agent.id, agent.version],
  );
  const all = versions.data?.data ?? [];
  const [from, setFrom] = useState<number>();
  const [to, setTo] = useState<number>();
  const a = all.find((v) => v.version === (from ?? all[1]?.version));
  const b = all.find((v) => v.version === (to ?? all[0]?.version));
  const pick = (label: string, value: number | undefined, onPick: (v: number) => void) => (
    <label>
      {label}
      <select value={value} onChange={(e) => onPick(Number(e.currentTarget.value))}>
        {all.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version} ({when(v.published_at)})
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section class="card">
      <h2>Versions</h2>
      <ErrorNote error={versions.error} />
      {all.length === 0 && <Empty>Nothing published yet. Publish the draft to make version 1.</Empty>}
      {all.length === 1 && <p>Version 1 is the only one; publish a change to compare versions.</p>}
      {all.length > 1 && (
        <>
          <div class="filters">
            {pick('From', a?.version, setFrom)}
            {pick('To', b?.version, setTo)}
          </div>
          <pre class="diff" tabIndex={0} aria-label={`Changes from v${a?.version} to v${b?.version}`}>
            {lineDiff(pretty(a?.agent_spec), pretty(b?.agent_spec)).map((l, i) => (
              <span
                key={i}
                class={l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : ''}
              >{`${l.kind} ${l.text}\n`}</span>
            ))}
          </pre>
        </>
      )}
    </section>
  );
}

export function AgentPage({ id }: { id: string }) {
  const loaded = useLoad(() => get<Agent>(path`/api/v1/agents/${id}`), [id]);
  const [agent, setAgent] = useState<Agent>();
  useEffect(() => setAgent(loaded.data), [loaded.data]);
  const [run, setRun] = useState<TestRun>();
  // The tests run first, their results shown (README, Tests and analysis); a draft that requires them
  // is published only when they pass, which the service checks again.
  const publish = useAction(async () => {
    const tests = await list<AgentTest>(path`/api/v1/agents/${id}/tests?per_page=1`);
    if (tests.meta.total_count) {
      const tried = await post<TestRun>(path`/api/v1/agents/${id}/tests/run`, {});
      setRun(tried);
      if (tried.failed && agent?.draft_spec?.require_tests === true)
        throw new Error(
          `${tried.failed} of ${tried.passed + tried.failed} tests failed against the draft (see Tests below): the draft requires them to pass, so nothing was published.`,
        );
    }
    setAgent(await post<Agent>(path`/api/v1/agents/${id}/publish`));
  });
  const remove = useAction(async () => {
    if (!confirm(`Delete ${agent?.name} and its deployments?`)) return;
    await del(path`/api/v1/agents/${id}`);
    location.hash = '#/agents';
  });
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (!agent) return <Loading what="the agent" />;
  const inUse = remove.error instanceof ApiError && remove.error.code === 'invalid_state';
  const unpublished = agent.version === 0 || JSON.stringify(agent.draft_spec) !== JSON.stringify(agent.agent_spec);
  return (
    <section>
      <p>
        <a href="#/agents">← Agents</a>
      </p>
      <Title>{agent.name}</Title>
      <p>
        <Badge value={agent.status} /> version {agent.version || 'none yet'} · updated {when(agent.updated_at)}
      </p>
      {agent.description && <p>{agent.description}</p>}
      {/* The next step is the primary one: publishing a draft that differs, else deploying what is published. */}
      <div class="actions">
        <button
          type="button"
          class={unpublished ? 'primary' : undefined}
          disabled={publish.busy || !unpublished || agent.status === 'generating' || agent.status === 'failed'}
          onClick={() => publish.start()}
        >
          {publish.busy ? 'Testing and publishing…' : 'Publish the draft'}
        </button>
        <a class={unpublished ? 'button' : 'button primary'} href={`#/deployments?agent=${agent.id}`}>
          Deploy it
        </a>
        <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.start()}>
          Delete
        </button>
      </div>
      {!unpublished && <p class="muted">The saved draft is what version {agent.version} published.</p>}
      <ErrorNote error={publish.error} />
      <ErrorNote error={remove.error} />
      {inUse && (
        <p class="warn">An active deployment uses this agent: deactivate its deployments first, then delete it.</p>
      )}
      <KnowledgeBasePicker agent={agent} onSaved={setAgent} />
      <DraftEditor agent={agent} onSaved={setAgent} />
      <AgentTests agent={agent} run={run} onRun={setRun} />
      <Versions agent={agent} />
    </section>
  );
}
