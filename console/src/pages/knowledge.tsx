import { useState } from 'preact/hooks';
import { api, del, get, list, path, post, query } from '../api';
import { when } from '../format';
import type { FoundChunk, KnowledgeBase, KnowledgeChunk, KnowledgeDocument, Retrieval } from '../types';
import { ActionForm, ErrorNote, ListTable, LocaleOptions, Title, useAction, useLoad } from '../ui';

/** README, Answers from your documents: the customer's knowledge bases, what each holds, and what a question finds. */
export function KnowledgeBasesPage() {
  const [page, setPage] = useState(1);
  const bases = useLoad(() => list<KnowledgeBase>(path`/api/v1/knowledge-bases${query({ page })}`), [page]);
  const [name, setName] = useState('');
  const [language, setLanguage] = useState('en');
  const create = useAction(async () => {
    const base = await post<KnowledgeBase>(path`/api/v1/knowledge-bases`, { name, language });
    location.hash = `#/knowledge/${base.id}`;
  });
  return (
    <section>
      <Title>Knowledge</Title>
      <p>
        Your documents, pages and files, cut into passages an agent answers from: its best passages go with every turn
        (to your hook as <code>knowledge</code>, to its model), and an agent whose <strong>Who answers</strong> is "Your
        knowledge base" answers from them itself, citing its source. Choose an agent's base on its page.
      </p>
      <ActionForm onRun={() => void create.start()}>
        <h2>New knowledge base</h2>
        <div class="grid">
          <label>
            Name
            <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Language (its words are stemmed in it)
            <select value={language} onChange={(e) => setLanguage(e.currentTarget.value)}>
              <LocaleOptions />
            </select>
          </label>
        </div>
        <ErrorNote error={create.error} />
        <button type="submit" class="primary" disabled={create.busy}>
          Create
        </button>
      </ActionForm>
      <ListTable
        what="Knowledge bases"
        loaded={bases}
        onPage={setPage}
        empty="No knowledge base yet: create one above, then add your pages and files to it."
        columns={[
          { label: 'Name', cell: (b) => <a href={`#/knowledge/${b.id}`}>{b.name}</a> },
          { label: 'Language', cell: (b) => b.language },
          { label: 'Created', cell: (b) => when(b.created_at) },
        ]}
      />
    </section>
  );
}

type Source = 'url' | 'file' | 'text';

/** A page by its URL, a file, or text: the three ways a document comes in. */
function AddDocument({ baseId, onAdded }: { baseId: string; onAdded(): void }) {
  const [source, setSource] = useState<Source>('url');
  const [url, setUrl] = useState('');
  const [refresh, setRefresh] = useState('24');
  const [chosen, setChosen] = useState<File>();
  const [title, setTitle] = useState('');
  const [format, setFormat] = useState('markdown');
  const [text, setText] = useState('');
  const [added, setAdded] = useState<KnowledgeDocument>();
  const add = useAction(async () => {
    setAdded(undefined);
    const to = path`/api/v1/knowledge-bases/${baseId}/documents`;
    let document: KnowledgeDocument;
    if (source === 'file') {
      const form = new FormData();
      form.set('file', chosen!);
      if (title) form.set('title', title);
      document = await post<KnowledgeDocument>(to, form);
    } else if (source === 'url')
      document = await post<KnowledgeDocument>(to, {
        url,
        ...(refresh ? { refresh_hours: Number(refresh) } : {}),
        ...(title ? { title } : {}),
      });
    else document = await post<KnowledgeDocument>(to, { title, text, format, ...(url ? { url } : {}) });
    setAdded(document);
    setUrl('');
    setText('');
    setTitle('');
    onAdded();
  });
  const tab = (value: Source, label: string) => (
    <label class="choice">
      <input type="radio" name="source" checked={source === value} onChange={() => setSource(value)} />
      {label}
    </label>
  );
  return (
    <ActionForm onRun={() => void add.start()}>
      <h2>Add a document</h2>
      <fieldset class="choices">
        <legend>From</legend>
        {tab('url', 'A page on the web')}
        {tab('file', 'A file')}
        {tab('text', 'Text')}
      </fieldset>
      {source === 'url' && (
        <div class="grid">
          <label>
            Page URL (HTML, Markdown, text or PDF)
            <input
              required
              type="url"
              placeholder="https://your-site.example/faq"
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
          </label>
          <label>
            Fetch it again
            <select value={refresh} onChange={(e) => setRefresh(e.currentTarget.value)}>
              <option value="">Only when I press Refresh</option>
              <option value="1">Every hour</option>
              <option value="24">Every day</option>
              <option value="168">Every week</option>
            </select>
          </label>
        </div>
      )}
      {source === 'file' && (
        <label>
          File: .txt, .md, .html or .pdf, at most 5 MB
          <input
            required
            type="file"
            accept=".txt,.md,.markdown,.html,.htm,.pdf"
            onChange={(e) => setChosen(e.currentTarget.files?.[0])}
          />
        </label>
      )}
      {source === 'text' && (
        <>
          <div class="grid">
            <label>
              Format
              <select value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
                <option value="markdown">Markdown (cut by its headings)</option>
                <option value="text">Plain text</option>
                <option value="html">HTML</option>
              </select>
            </label>
            <label>
              Where readers find it (optional: citations link there)
              <input type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
            </label>
          </div>
          <label>
            Text
            <textarea required rows={8} value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </label>
        </>
      )}
      <label>
        Title{source === 'text' ? '' : " (optional: the page's or file's own title otherwise)"}
        <input
          required={source === 'text'}
          maxLength={200}
          value={title}
          onInput={(e) => setTitle(e.currentTarget.value)}
        />
      </label>
      <ErrorNote error={add.error} />
      {added && (
        <p role="status" class="ok">
          Added “{added.title}”: {added.chunk_count} passage{added.chunk_count === 1 ? '' : 's'}.
        </p>
      )}
      <button type="submit" class="primary" disabled={add.busy}>
        {add.busy ? (source === 'url' ? 'Fetching…' : 'Adding…') : 'Add document'}
      </button>
    </ActionForm>
  );
}

/** A document's passages, as the search sees them. */
function Passages({ baseId, documentId }: { baseId: string; documentId: string }) {
  const chunks = useLoad(
    () => get<KnowledgeChunk[]>(path`/api/v1/knowledge-bases/${baseId}/documents/${documentId}/chunks`),
    [documentId],
  );
  return (
    <>
      <ErrorNote error={chunks.error} />
      <ol class="passages">
        {chunks.data?.map((c) => (
          <li key={c.id}>
            <p class="muted">
              {c.heading || 'Before the first heading'}
              {c.url && (
                <>
                  {' · '}
                  <a href={c.url} target="_blank" rel="noopener noreferrer">
                    {c.url}
                  </a>
                </>
              )}
            </p>
            <p class="plain">{c.text}</p>
          </li>
        ))}
      </ol>
    </>
  );
}

function sourceOf(d: KnowledgeDocument) {
  if (d.source !== 'url') return d.source === 'file' ? `File (${d.format})` : `Text (${d.format})`;
  const every = d.refresh_hours ? `, fetched every ${d.refresh_hours} h` : '';
  return `Page (${d.format}${every})`;
}

/** The question's words in a passage, marked: why the search found it. */
function Marked({ text, words }: { text: string; words: string[] }) {
  if (!words.length) return <>{text}</>;
  const stems = words.map((w) => (w.length > 4 ? w.slice(0, -2) : w).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const parts = text.split(new RegExp(`(\\p{L}*(?:${stems.join('|')})\\p{L}*)`, 'giu'));
  return <>{parts.map((part, i) => (i % 2 ? <mark key={i}>{part}</mark> : part))}</>;
}

/** What a question finds, best first, and why: the passages, their scores and the words each holds. */
function SearchBox({ baseId }: { baseId: string }) {
  const [q, setQ] = useState('');
  const [found, setFound] = useState<{ q: string; chunks: FoundChunk[]; how: Retrieval }>();
  const search = useAction(async () => {
    const asked = q.trim();
    const { data, meta } = await api<FoundChunk[], Retrieval>(
      'GET',
      path`/api/v1/knowledge-bases/${baseId}/search${query({ q: asked })}`,
    );
    setFound({ q: asked, chunks: data, how: meta });
  });
  return (
    <ActionForm onRun={() => void search.start()}>
      <h2>Ask it a question</h2>
      <p class="muted">The passages a visitor's question finds, best first: what goes with the turn, and why.</p>
      <div class="inline-form">
        <label>
          Question
          <input
            required
            maxLength={500}
            value={q}
            placeholder="Where can I park?"
            onInput={(e) => setQ(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={search.busy}>
          Search
        </button>
      </div>
      <ErrorNote error={search.error} />
      {found && (
        <div role="status">
          <p class="muted">
            {found.how.retrieval === 'hybrid'
              ? 'Found by its words and by meaning (the embeddings endpoint), the two rankings fused.'
              : found.how.embeddings_error
                ? `Found by its words alone: the embeddings endpoint failed (${found.how.embeddings_error}).`
                : 'Found by its words (stemmed).'}
          </p>
          {found.chunks.length === 0 ? (
            <p class="warn">Nothing holds the words of “{found.q}”: the agent would say it does not know.</p>
          ) : (
            <ol class="passages">
              {found.chunks.map((c) => (
                <li key={c.id}>
                  <p>
                    <strong>
                      {c.title}
                      {c.heading ? ` › ${c.heading}` : ''}
                    </strong>{' '}
                    <span class="muted">
                      score {c.score} · holds {c.matched.length ? c.matched.join(', ') : 'a stem of the question'}
                    </span>
                  </p>
                  <p class="plain">
                    <Marked text={c.text} words={c.matched} />
                  </p>
                  {c.url && (
                    <a href={c.url} target="_blank" rel="noopener noreferrer">
                      {c.url}
                    </a>
                  )}
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </ActionForm>
  );
}

export function KnowledgeBasePage({ id }: { id: string }) {
  const base = useLoad(() => get<KnowledgeBase>(path`/api/v1/knowledge-bases/${id}`), [id]);
  const [page, setPage] = useState(1);
  const documents = useLoad(
    () => list<KnowledgeDocument>(path`/api/v1/knowledge-bases/${id}/documents${query({ page })}`),
    [id, page],
  );
  const [open, setOpen] = useState<string>();
  const act = useAction(async (what: 'refresh' | 'delete', d: KnowledgeDocument) => {
    if (what === 'delete') {
      if (!confirm(`Delete “${d.title}” and its passages?`)) return;
      await del(path`/api/v1/knowledge-bases/${id}/documents/${d.id}`);
    } else await post(path`/api/v1/knowledge-bases/${id}/documents/${d.id}/refresh`);
    documents.reload();
  });
  const remove = useAction(async () => {
    if (!confirm(`Delete the knowledge base “${base.data?.name}” with every document in it?`)) return;
    await del(path`/api/v1/knowledge-bases/${id}`);
    location.hash = '#/knowledge';
  });
  return (
    <section>
      <p>
        <a href="#/knowledge">← Knowledge</a>
      </p>
      <Title>{base.data?.name ?? 'Knowledge base'}</Title>
      <ErrorNote error={base.error} />
      {base.data && (
        <p class="muted">
          Language {base.data.language} · created {when(base.data.created_at)}
        </p>
      )}
      <SearchBox baseId={id} />
      <AddDocument baseId={id} onAdded={documents.reload} />
      <h2>Documents</h2>
      <ErrorNote error={act.error} />
      <ListTable
        what="Documents"
        loaded={documents}
        onPage={setPage}
        empty="No document yet: add a page, a file or text above."
        columns={[
          {
            label: 'Document',
            cell: (d) => (
              <>
                <strong>{d.title}</strong>
                {d.url && (
                  <>
                    <br />
                    <a href={d.url} target="_blank" rel="noopener noreferrer" class="muted">
                      {d.url}
                    </a>
                  </>
                )}
                {d.fetch_error && (
                  <p class="warn">
                    Last fetch failed ({d.fetched_at ? when(d.fetched_at) : ''}): {d.fetch_error}. Its passages are the
                    ones fetched before.
                  </p>
                )}
                {open === d.id && <Passages baseId={id} documentId={d.id} />}
              </>
            ),
          },
          { label: 'From', cell: (d) => sourceOf(d) },
          {
            label: 'Passages',
            cell: (d) => (
              <button
                type="button"
                aria-expanded={open === d.id}
                aria-label={`${open === d.id ? 'Hide' : 'Show'} the ${d.chunk_count} passage${d.chunk_count === 1 ? '' : 's'} of ${d.title}`}
                onClick={() => setOpen(open === d.id ? undefined : d.id)}
              >
                {d.chunk_count} {open === d.id ? '▴' : '▾'}
              </button>
            ),
          },
          {
            label: 'Updated',
            cell: (d) => (d.source === 'url' && d.fetched_at ? `fetched ${when(d.fetched_at)}` : when(d.updated_at)),
          },
          {
            label: 'Actions',
            cell: (d) => (
              <div class="actions">
                {d.source === 'url' && (
                  <button
                    type="button"
                    disabled={act.busy}
                    onClick={() => act.start('refresh', d)}
                    aria-label={`Refresh ${d.title}`}
                  >
                    Refresh
                  </button>
                )}
                <button
                  type="button"
                  class="danger"
                  disabled={act.busy}
                  onClick={() => act.start('delete', d)}
                  aria-label={`Delete ${d.title}`}
                >
                  Delete
                </button>
              </div>
            ),
          },
        ]}
      />
      <ErrorNote error={remove.error} />
      <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.start()}>
        Delete this knowledge base
      </button>
    </section>
  );
}
