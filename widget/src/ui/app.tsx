import { Component, createRef } from 'preact';
import type { SessionClient } from '../session/client';
import type { View } from '../session/transcript';
import type { Speech } from '../speech/speech';
import type { Voice } from '../speech/voice';
import { t, wordsLocale } from './words';

type PanelModule = typeof import('./panel');
let loadingPanel: Promise<PanelModule> | undefined;

export interface AppProps {
  client: SessionClient;
  /** The page's speech when init gave one; else the browser's, with the panel. */
  speech: Speech | undefined;
  voice: Voice;
  /** Opened and closed from the public API as well as from the launcher. */
  open: boolean;
  setOpen(open: boolean): void;
  /** A problem outside the session (the microphone), for the page's `error` handlers. */
  onError(code: string, message: string): void;
  /** The visitor chose a language from the menu. */
  onLanguage(tag: string): void;
  /** A greeting rule's teaser beside the launcher (README, Greeting visitors first), and its dismissal. */
  teaser: string | undefined;
  onDismiss(): void;
}

/** How long the launcher waits unseen for the deployment's look before it shows in the default one. */
const UNSTYLED_WAIT_MS = 3_000;

interface AppState {
  view: View;
  /** The deployment's look took too long to come (a slow or refused connection): the launcher shows anyway. */
  waited?: boolean;
  /** The panel's code, once fetched. */
  Panel?: PanelModule['Panel'];
}

/**
 * The launcher, a greeting rule's teaser, and the panel once opened. A class, not hooks: every
 * page carries the launcher, and Preact's hooks come with the panel only. The panel's code is
 * fetched when the widget first opens, so a page whose visitors never open it never downloads
 * it; one that cannot be fetched is reported, and tried again at the next opening.
 */
export class App extends Component<AppProps, AppState> {
  override state: AppState = { view: this.props.client.view };
  #unview: (() => void) | undefined;
  readonly #launcher = createRef<HTMLButtonElement>();
  // Escape puts a teaser away wherever focus is: it came unasked (WCAG 1.4.13).
  readonly #escape = (e: KeyboardEvent) => e.key === 'Escape' && this.props.onDismiss();

  #unstyled: ReturnType<typeof setTimeout> | undefined;

  override componentDidMount(): void {
    this.#unview = this.props.client.onView((view) => this.setState({ view }));
    if (!this.state.view.styled) this.#unstyled = setTimeout(() => this.setState({ waited: true }), UNSTYLED_WAIT_MS);
    this.#follow();
  }

  override componentDidUpdate(previous: AppProps): void {
    // Closing hands focus back to the launcher, in the same frame, so keyboard users are never stranded.
    if (previous.open && !this.props.open) this.#launcher.current?.focus();
    this.#follow();
  }

  override componentWillUnmount(): void {
    clearTimeout(this.#unstyled);
    this.#unview?.();
    document.removeEventListener('keydown', this.#escape);
  }

  /** Listens for Escape while a teaser shows; fetches the panel once the widget is open. */
  #follow(): void {
    const { open, teaser, onError } = this.props;
    if (teaser) document.addEventListener('keydown', this.#escape);
    else document.removeEventListener('keydown', this.#escape);
    if (!open || this.state.Panel) return;
    (loadingPanel ??= import('./panel')).then(
      (loaded) => this.setState({ Panel: loaded.Panel }),
      (err: unknown) => {
        loadingPanel = undefined;
        onError(
          'panel_unavailable',
          `The panel could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
        );
      },
    );
  }

  override render({ client, speech, voice, open, setOpen, onError, onLanguage, teaser, onDismiss }: AppProps) {
    const { view, Panel, waited } = this.state;
    const title = view.theme.title ?? view.agent?.name ?? 'Concierge';
    // Never a launcher in another colour, or on the other side, before the deployment's own: it
    // waits unseen for `ready` (remembered from the tab's last page), a connection that failed, or
    // a few seconds.
    const unseen = !view.styled && !waited && !open && view.status === 'connecting';
    // Where `position` names, in every language: a visitor switching to Arabic must not see it jump
    // across the page (only the panel's inside is laid out right to left).
    const left = view.theme.position === 'bottom-left';
    return (
      <div
        class={`root${left ? ' left' : ''}`}
        lang={wordsLocale()}
        style={view.theme.accent_color ? { '--accent': view.theme.accent_color } : undefined}
      >
        {open && Panel && (
          <Panel
            client={client}
            speech={speech}
            voice={voice}
            view={view}
            title={title}
            onClose={() => setOpen(false)}
            onError={onError}
            onLanguage={onLanguage}
          />
        )}
        {/* Present before a teaser comes, so screen readers announce it (politely) when it does. */}
        <div role="status" class="teaser-slot">
          {teaser && (
            <div class="teaser">
              <button type="button" class="teaser-text" dir="auto" onClick={() => setOpen(true)}>
                {teaser}
              </button>
              <button type="button" class="teaser-close" aria-label={t('dismiss')} onClick={onDismiss}>
                ×
              </button>
            </div>
          )}
        </div>
        <button
          ref={this.#launcher}
          class={unseen ? 'launcher unseen' : 'launcher'}
          type="button"
          aria-expanded={open}
          aria-label={t(open ? 'close_named' : 'open', { title })}
          onClick={() => setOpen(!open)}
        >
          <svg viewBox="0 0 24 24" aria-hidden="true">
            {open ? (
              <path d="M6.4 5 5 6.4 10.6 12 5 17.6 6.4 19l5.6-5.6 5.6 5.6 1.4-1.4-5.6-5.6L19 6.4 17.6 5 12 10.6z" />
            ) : (
              <path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z" />
            )}
          </svg>
        </button>
      </div>
    );
  }
}
