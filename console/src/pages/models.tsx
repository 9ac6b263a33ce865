import { useState } from 'preact/hooks';
import { del, list, path, post, query } from '../api';
import { when } from '../format';
import type { ModelEndpoint, ModelTest } from '../types';
import { ActionForm, ErrorNote, ListTable, Title, useAction, useLoad } from '../ui';

/** Where each kind of server is, for the placeholder and the help (README, An agent without a server). */
const EXAMPLES = 'https://api.openai.com/v1 · Ollama: http://127.0.0.1:11434/v1 · llama.cpp: http://127.0.0.1:8080/v1';

function AddEndpoint({ onAdded }: { onAdded(): void }) {
  const [name, setName] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [key, setKey] = useState('');
  const add = useAction(async () => {
    await post(path`/api/v1/model-endpoints`, { name, base_url: baseUrl, ...(key ? { api_key: key } : {}) });
    setName('');
    setBaseUrl('');
    setKey('');
    onAdded();
  });
  return (
    <ActionForm onRun={() => void add.start()}>
      <h2>Add a model endpoint</h2>
      <p class="muted">
        Any server that speaks OpenAI's chat completions: OpenAI, Azure OpenAI, Ollama, llama.cpp's server, vLLM,
        LiteLLM. The service calls only public addresses unless its operator allows a host in HOOK_ALLOWED_HOSTS (npm
        start allows Ollama's, llama.cpp's and vLLM's ports on its own machine); Test says which entry a refused one
        needs.
      </p>
      <div class="grid">
        <label>
          Name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Base URL (…/v1)
          <input
            required
            type="url"
            placeholder="https://api.openai.com/v1"
            value={baseUrl}
            onInput={(e) => setBaseUrl(e.currentTarget.value)}
          />
        </label>
        <label>
          API key (optional; stored sealed, never shown again)
          <input type="password" autoComplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
      </div>
      <p class="muted">{EXAMPLES}</p>
      <ErrorNote error={add.error} />
      <button type="submit" class="primary" disabled={add.busy}>
        Add endpoint
      </button>
    </ActionForm>
  );
}

/** One question to a model on the endpoint, and what came back or why nothing did. */
function TestEndpoint({ endpoint }: { endpoint: ModelEndpoint }) {
  const [model, setModel] = useState('');
  const [result, setResult] = useState<ModelTest>();
  const test = useAction(async () => {
    setResult(undefined);
    setResult(await post<ModelTest>(path`/api/v1/model-endpoints/${endpoint.id}/test`, { model }));
  });
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        void test.start();
      }}
    >
      <label>
        Model to ask
        <input
          required
          placeholder="gpt-4o-mini"
          value={model}
          onInput={(e) => setModel(e.currentTarget.value)}
          aria-label={`Model to ask on ${endpoint.name}`}
        />
      </label>
      <button type="submit" disabled={test.busy}>
        {test.busy ? 'Asking…' : 'Test'}
      </button>
      <ErrorNote error={test.error} />
      {result && (
        <p role="status" class={result.ok ? 'ok' : 'warn'}>
          {result.ok
            ? `“${result.answer}” (first word after ${result.first_token_ms} ms, ${result.duration_ms} ms in all)`
            : `It did not answer: ${result.error}`}
        </p>
      )}
    </form>
  );
}

export function ModelEndpointsPage() {
  const [page, setPage] = useState(1);
  const endpoints = useLoad(() => list<ModelEndpoint>(path`/api/v1/model-endpoints${query({ page })}`), [page]);
  const remove = useAction(async (endpoint: ModelEndpoint) => {
    if (!confirm(`Remove ${endpoint.name}?`)) return;
    await del(path`/api/v1/model-endpoints/${endpoint.id}`);
    endpoints.reload();
  });
  return (
    <section>
      <Title>Model endpoints</Title>
      <p>
        Where agents that answer on their own call their language model. Choose one on an agent's page, under{' '}
        <strong>Who answers</strong>.
      </p>
      <AddEndpoint onAdded={endpoints.reload} />
      <ErrorNote error={remove.error} />
      <ListTable
        what="Model endpoints"
        loaded={endpoints}
        onPage={setPage}
        empty="No model endpoint yet: add one above (or the operator sets MODEL_URL for every agent)."
        columns={[
          { label: 'Name', cell: (e) => e.name },
          { label: 'Base URL', cell: (e) => <code>{e.base_url}</code> },
          { label: 'Key', cell: (e) => (e.api_key_last4 ? `…${e.api_key_last4}` : 'none') },
          { label: 'Added', cell: (e) => when(e.created_at) },
          { label: 'Test', cell: (e) => <TestEndpoint endpoint={e} /> },
          {
            label: 'Remove',
            cell: (e) => (
              <button
                type="button"
                class="danger"
                disabled={remove.busy}
                onClick={() => remove.start(e)}
                aria-label={`Remove ${e.name}`}
              >
                Remove
              </button>
            ),
          },
        ]}
      />
    </section>
  );
}
