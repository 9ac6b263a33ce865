import type { Activity, Handoff } from './inbox';

export type ActivityListener = (message: { kind: 'event'; activity: Activity } | { kind: 'handoff'; handoff: Handoff }) => void;

const listeners = new Set<ActivityListener>();
let source: EventSource | undefined;

/**
 * Follows GET /api/v1/activity while anyone listens: one EventSource for the whole tab, which
 * resumes by itself with Last-Event-ID after a drop. The cookie is enough here (README, The console).
 */
export function onActivity(listener: ActivityListener): () => void {
  listeners.add(listener);
  if (!source) {
    source = new EventSource('/api/v1/activity');
    const tell = (message: Parameters<ActivityListener>[0]) => {
      for (const l of listeners) l(message);
    };
    source.onmessage = (m: MessageEvent<string>) => tell({ kind: 'event', activity: JSON.parse(m.data) as Activity });
    source.addEventListener('handoff', (m) => tell({ kind: 'handoff', handoff: JSON.parse((m as MessageEvent<string>).data) as Handoff }));
  }
  return () => {
    listeners.delete(listener);
    if (!listeners.size) {
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
