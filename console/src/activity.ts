import type { Activity, Handoff } from './inbox';

export type ActivityMessage =
  | { kind: 'event'; activity: Activity }
  | { kind: 'handoff'; handoff: Handoff }
  /** The stream was lost and opened anew: what happened meanwhile must be read again. */
  | { kind: 'resync' };
export type ActivityListener = (message: ActivityMessage) => void;

const listeners = new Set<ActivityListener>();
let source: EventSource | undefined;
let retry: ReturnType<typeof setTimeout> | undefined;
/** After a refusal (the store down, 503; signed out, 401) the browser gives up: we try again, backing off. */
let retryMs = 2_000;
const MAX_RETRY_MS = 60_000;

const tell = (message: ActivityMessage) => {
  for (const l of listeners) l(message);
};

function connect(replacing: boolean): void {
  const opened = new EventSource('/api/v1/activity');
  source = opened;
  opened.onopen = () => {
    retryMs = 2_000;
    if (replacing) tell({ kind: 'resync' });
    replacing = false;
  };
  opened.onmessage = (m: MessageEvent<string>) => tell({ kind: 'event', activity: JSON.parse(m.data) as Activity });
  opened.addEventListener('handoff', (m) =>
    tell({ kind: 'handoff', handoff: JSON.parse((m as MessageEvent<string>).data) as Handoff }),
  );
  // The service found this tab too far behind to catch it up: what it shows is read again.
  opened.addEventListener('resync', () => tell({ kind: 'resync' }));
  // A dropped connection the browser resumes itself, with Last-Event-ID; a refused one it closes for good.
  opened.onerror = () => {
    if (opened.readyState !== EventSource.CLOSED || source !== opened) return;
    retry = setTimeout(() => connect(true), retryMs);
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };
}

/**
 * Follows GET /api/v1/activity while anyone listens: one EventSource for the whole tab, which
 * resumes by itself with Last-Event-ID after a drop, and is opened anew after a refusal. The
 * cookie is enough here (README, The console).
 */
export function onActivity(listener: ActivityListener): () => void {
  listeners.add(listener);
  if (!source) connect(false);
  return () => {
    listeners.delete(listener);
    if (!listeners.size) {
      clearTimeout(retry);
      source?.close();
      source = undefined;
    }
  };
}

let audio: AudioContext | undefined;

/** Browsers let a page make sound only after a person's gesture: the chime is armed by the first click or key. */
export function armChime(): void {
  const arm = () => {
    audio ??= new AudioContext();
    void audio.resume();
  };
  addEventListener('pointerdown', arm, { once: true });
  addEventListener('keydown', arm, { once: true });
}

/** Two short rising tones, when the chime is armed; otherwise nothing (the visible notice still shows). */
export function chime(): void {
  if (audio?.state !== 'running') return;
  const start = audio.currentTime;
  for (const [i, hz] of [660, 880].entries()) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = hz;
    gain.gain.setValueAtTime(0.15, start + i * 0.18);
    gain.gain.exponentialRampToValueAtTime(0.001, start + i * 0.18 + 0.16);
    tone.connect(gain).connect(audio.destination);
    tone.start(start + i * 0.18);
    tone.stop(start + i * 0.18 + 0.16);
  }
}
