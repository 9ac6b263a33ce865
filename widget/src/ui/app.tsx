import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { SessionClient } from '../session/client';
import type { View } from '../session/transcript';
import type { Speech } from '../speech/speech';
import type { Voice } from '../speech/voice';
import { t, wordsLocale } from './words';

type PanelModule = typeof import('./panel');
let loadingPanel: Promise<PanelModule> | undefined;

export interface AppProps {
  client: SessionClient;
  speech: Speech;
  voice: Voice;
  /** Opened and closed from the public API as well as from the launcher. */
  open: boolean;
  setOpen(open: boolean): void;
  /** A problem outside the session (the microphone), for the page's `error` handlers. */
  onError(code: string, message: string): void;
  /** The visitor chose a language from the menu. */
  onLanguage(tag: string): void;
}

/**
 * The panel's code, fetched when the widget first opens: a page whose visitors never open it never
 * downloads it. One that cannot be fetched is reported, and tried again at the next opening.
 */
function usePanel(open: boolean, onError: AppProps['onError']): PanelModule['Panel'] | undefined {
  const [panel, setPanel] = useState<PanelModule['Panel']>();
  useEffect(() => {
    if (!open || panel) return;
    (loadingPanel ??= import('./panel')).then(
      (loaded) => setPanel(() => loaded.Panel),
      (err: unknown) => {
        loadingPanel = undefined;
        onError(
          'panel_unavailable',
          `The panel could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
        );
      },
    );
  }, [open]);
  return panel;
}

function useView(client: SessionClient): View {
  const [view, setView] = useState(client.view);
  useEffect(() => client.onView(setView), [client]);
  return view;
}

export function App({ client, speech, voice, open, setOpen, onError, onLanguage }: AppProps) {
  const view = useView(client);
  const Panel = usePanel(open, onError);
  const launcher = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(open);
  useLayoutEffect(() => {
    // Closing hands focus back to the launcher, in the same frame, so keyboard users are never stranded.
    if (wasOpen.current && !open) launcher.current?.focus();
    wasOpen.current = open;
  }, [open]);
  const title = view.theme.title ?? view.agent?.name ?? 'Concierge';
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
      <button
        ref={launcher}
        class="launcher"
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
