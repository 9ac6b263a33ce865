import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, file, path } from './api';
import { WIDGET_LOCALES } from '#protocol/widget-locales';
import { localeLabel } from './form-checks';
import { duration, when } from './format';
import { inLanguagesOf } from './spec-fields';
import type { Delivery, Deployment, PageMeta } from './types';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/** Loads once per change of `deps`, and again on `reload()`; a stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
    // The caller names what the load depends on (`deps`); `load` itself is a new function each render.
  }, [...deps, tick]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: useCallback(() => setTick((t) => t + 1), []),
  };
}

/** Runs an action, keeping its error to show and whether it is running (to disable its button). */
export function useAction<A extends unknown[]>(run: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const start = async (...args: A) => {
    setBusy(true);
    setError(undefined);
    try {
      await run(...args);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, start };
}

/** An API error with its code and message (and the details of a validation error). */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e =
    error instanceof ApiError
      ? error
      : new ApiError(0, 'error', error instanceof Error ? error.message : String(error));
  return (
    <div class="error" role="alert">
      <strong>
        {e.status ? `${e.status} ` : ''}
        <code>{e.code}</code>
      </strong>{' '}
      {e.message}
      {e.details.length > 0 && (
        <ul>
          {e.details.map((d) => (
            <li key={d.path}>
              <code>{d.path}</code>: {d.message}
            </li>
          ))}
        </ul>
      )}
      {e.requestId && <small> Request id {e.requestId}</small>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-busy="true">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Pager({ meta, onPage }: { meta: PageMeta | undefined; onPage(page: number): void }) {
  if (!meta || meta.total_pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={meta.page <= 1} onClick={() => onPage(meta.page - 1)}>
        Previous
      </button>
      <span>
        Page {meta.page} of {meta.total_pages} ({meta.total_count})
      </span>
      <button type="button" disabled={meta.page >= meta.total_pages} onClick={() => onPage(meta.page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** Copies `text`; says so, or that the browser refused (no clipboard outside https or localhost), so a secret is never thought copied when it is not. */
export function Copy({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [said, setSaid] = useState<string>();
  const copy = async () => {
    const copied = navigator.clipboard
      ? await navigator.clipboard.writeText(text).then(
          () => true,
          () => false,
        )
      : false;
    setSaid(copied ? 'Copied' : 'Copy refused: select the text and copy it');
    setTimeout(() => setSaid(undefined), copied ? 1500 : 4000);
  };
  return (
    <button type="button" class="small" onClick={copy} aria-live="polite">
      {said ?? label}
    </button>
  );
}

export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <figure class="code">
      <figcaption>
        {label} <Copy text={code} />
      </figcaption>
      <pre tabIndex={0}>{code}</pre>
    </figure>
  );
}

export const Badge = ({ value }: { value: string }) => <span class={`badge badge-${value}`}>{value}</span>;

/** One recorded outbound call: what was sent, and what came back. */
export function DeliveryView({ d }: { d: Delivery }) {
  return (
    <div class="delivery">
      <p>
        <Badge value={d.outcome} /> <code>{d.event_type}</code> attempt {d.attempt} to <code>{d.url}</code>,{' '}
        {when(d.sent_at)}, {duration(d.duration_ms)}
        {d.error && (
          <>
            {' '}
            error <code>{d.error}</code>
          </>
        )}
      </p>
      {d.error_detail && <p class="error-detail">{d.error_detail}</p>}
      <details>
        <summary>Request</summary>
        <pre tabIndex={0}>
          {Object.entries(d.request.headers).map(([k, v]) => `${k}: ${v}\n`)}
          {`\n${d.request.body}`}
        </pre>
      </details>
      <details>
        <summary>Response {d.response ? d.response.status : '(none)'}</summary>
        {d.response ? (
          <pre tabIndex={0}>
            {Object.entries(d.response.headers).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}\n`)}
            {`\n${d.response.body}${d.response.truncated ? '\n… (cut at 4 KiB)' : ''}`}
          </pre>
        ) : (
          <p class="muted">No answer: {d.error}</p>
        )}
      </details>
    </div>
  );
}

/** The page's heading: focused on navigation (see the console's router). */
export const Title = ({ children }: { children: ComponentChildren }) => <h1 tabIndex={-1}>{children}</h1>;

/** A form that runs `onRun` on submit (Enter included) instead of loading a page. */
export function ActionForm({
  onRun,
  class: className = 'card',
  children,
}: {
  onRun(): void;
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <form
      class={className}
      onSubmit={(e) => {
        e.preventDefault();
        onRun();
      }}
    >
      {children}
    </form>
  );
}

/**
 * Words a visitor reads in their language (a greeting rule's teaser, an agent's greeting): one text
 * for everyone, or one line per language; what could be read two ways is marked and explained.
 */
export function InLanguagesField({
  label,
  value,
  onInput,
  required,
  disabled,
  wide,
}: {
  label: string;
  value: string;
  onInput(text: string): void;
  required?: boolean;
  disabled?: boolean;
  /** The whole row of a grid of fields: its hint needs the room. */
  wide?: boolean;
}) {
  const read = inLanguagesOf(value);
  return (
    <label class={wide ? 'wide' : undefined}>
      {label}
      <span class="hint">
        One text for every visitor, or a line per language: <code>en: Questions?</code>, <code>de: Fragen?</code>. A
        visitor sees their language, else English, else the first line.
      </span>
      <textarea
        rows={Math.min(8, Math.max(2, value.split('\n').length))}
        required={required}
        disabled={disabled}
        value={value}
        aria-invalid={'problem' in read}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      {'problem' in read && <span class="warn">{read.problem}</span>}
    </label>
  );
}

/** A list's day range (local days, the last one included) and its NDJSON export, at the end of its filters. */
export function DaysAndExport(props: {
  from: string;
  to: string;
  onFrom(e: { currentTarget: HTMLInputElement }): void;
  onTo(e: { currentTarget: HTMLInputElement }): void;
  exporting: { busy: boolean; start(): void };
}) {
  return (
    <>
      <label>
        From (day)
        <input type="date" value={props.from} onInput={props.onFrom} />
      </label>
      <label>
        To (day, included)
        <input type="date" value={props.to} onInput={props.onTo} />
      </label>
      <button type="button" disabled={props.exporting.busy} onClick={() => props.exporting.start()}>
        Export NDJSON
      </button>
    </>
  );
}

/** Hands `body` to the browser as a file to save (an export). */
export function saveAs(name: string, body: string, type: string): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([body], { type }));
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}

/** A secret shown once: copy it now, it is never shown again. */
export function OnceSecret({
  label,
  value,
  use = "Copy it into your server's configuration.",
}: {
  label: string;
  value: string;
  /** Where it goes, and what it does there. */
  use?: string;
}) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong>: shown only now. {use}
      </p>
      <code>{value}</code> <Copy text={value} />
    </div>
  );
}

export interface Column<T> {
  label: string;
  cell(row: T): ComponentChildren;
}

/** A page of a list: loading, its error, an empty state that says what to do, the table, the pager. */
export function ListTable<T extends { id: string }>(props: {
  what: string;
  loaded: Loaded<{ data: T[]; meta: PageMeta }>;
  columns: Column<T>[];
  empty: ComponentChildren;
  onPage(page: number): void;
}) {
  const { loaded } = props;
  return (
    <>
      <ErrorNote error={loaded.error} />
      {loaded.loading && !loaded.data && <Loading what={props.what} />}
      {loaded.data?.data.length === 0 && <Empty>{props.empty}</Empty>}
      {!!loaded.data?.data.length && (
        <table>
          <caption class="sr-only">{props.what}</caption>
          <thead>
            <tr>
              {props.columns.map((c) => (
                <th key={c.label} scope="col">
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {loaded.data.data.map((row) => (
              <tr key={row.id}>
                {props.columns.map((c) => (
                  <td key={c.label}>{c.cell(row)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager meta={loaded.data?.meta} onPage={props.onPage} />
    </>
  );
}

/** The widget's locales as a select's options, each named in itself: "Deutsch (de)". */
export function LocaleOptions() {
  return (
    <>
      {WIDGET_LOCALES.map((l) => (
        <option key={l} value={l}>
          {localeLabel(l)}
        </option>
      ))}
    </>
  );
}

/** Deployments as a select's options, each by its agent and environment. */
export function DeploymentOptions({ deployments = [] }: { deployments: Deployment[] | undefined }) {
  return (
    <>
      {deployments.map((d) => (
        <option key={d.id} value={d.id}>
          {d.agent_name} ({d.environment})
        </option>
      ))}
    </>
  );
}

/**
 * "Hear the voice": a sentence in the agent's voice on the service's synthesiser (README, The
 * agent's own voice), played here; `trying` hears a voice, words or text before they are saved. A service without a
 * voice of its own says which setting gives it one.
 */
export function VoiceSample({ agentId, trying = {} }: { agentId: string; trying?: Record<string, unknown> }) {
  const [url, setUrl] = useState<string>();
  const hear = useAction(async () => {
    const wav = await file(path`/api/v1/agents/${agentId}/voice-sample`, trying);
    if (url) URL.revokeObjectURL(url);
    setUrl(URL.createObjectURL(wav));
  });
  return (
    <div class="voice-sample">
      <button type="button" disabled={hear.busy} onClick={() => void hear.start()}>
        {hear.busy ? 'Synthesising…' : 'Hear the voice'}
      </button>
      {url && <audio controls autoplay src={url} aria-label="The agent's voice" />}
      <ErrorNote error={hear.error} />
    </div>
  );
}

/** A number field of a form: empty is the service's default, which its label or placeholder names. */
export function NumberField(props: {
  label: string;
  value: string;
  min: number;
  max?: number;
  placeholder?: string;
  disabled?: boolean;
  onInput(value: string): void;
}) {
  return (
    <label>
      {props.label}
      <input
        type="number"
        min={props.min}
        max={props.max}
        value={props.value}
        placeholder={props.placeholder}
        disabled={props.disabled}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}
