import type { SessionClient } from '../session/client';
import { capture } from './capture';
import { ListenError } from './speech';
import { micReason } from './service-listener';
import type { Voice } from './voice';

/** What the open mic is doing, as the visitor sees it: waiting for them, hearing them, the agent thinking or speaking. */
export type MicPhase = 'listening' | 'hearing' | 'thinking' | 'speaking';

export interface MicState {
  phase: MicPhase;
  /** How loud the microphone is now, 0 to 1: the level meter. */
  level: number;
  /** The words of the turn so far, as the service recognised them. */
  partial: string;
}

export interface OpenMic {
  /** The visitor pressed the mic again, or closed the panel: the microphone is released. */
  close(): void;
}

/** A loudness (RMS of -1..1 samples) shown as a full meter: speech near the microphone. */
const FULL_LEVEL_RMS = 0.12;

/**
 * The hands-free mic (README, Hands-free voice), fetched with the visitor's first press: the
 * microphone streamed to the service until the visitor presses again, closes the panel, the
 * conversation ends, the connection drops, or the service closes it (`listening_stopped`). The
 * service finds the turns; this lowers the agent's voice when the visitor starts speaking over it,
 * stops it at `interrupt` (its playback reported, so the service knows what was heard) and brings
 * it back at `resume`. Rejects with a {@link ListenError} when the microphone cannot be had.
 */
export async function openMic(
  client: SessionClient,
  voice: Voice,
  on: { state(state: MicState): void; problem(code: string): void; closed(reason: string): void },
): Promise<OpenMic> {
  const base = crypto.randomUUID();
  const state: MicState = { phase: 'listening', level: 0, partial: '' };
  let speaking = false;
  const show = (patch: Partial<MicState>) => {
    Object.assign(state, patch);
    const waiting = client.view.lines.some((l) => l.state === 'sent' || l.state === 'thinking');
    const phase =
      state.phase !== 'listening' ? state.phase : speaking ? 'speaking' : waiting ? 'thinking' : 'listening';
    on.state({ ...state, phase });
  };
  // Audio goes out only after `audio_start`: a frame before it would break the protocol.
  let streaming = false;
  let captured;
  try {
    captured = await capture((pcm, rms) => {
      if (streaming) client.sendSpeech(pcm);
      show({ level: Math.min(1, rms / FULL_LEVEL_RMS) });
    });
  } catch (err) {
    throw new ListenError(micReason(err));
  }
  const seen = new Set(client.view.lines.map((l) => l.key));
  let open = true;
  const close = (reason: string) => {
    if (!open) return;
    open = false;
    captured.stop();
    for (const stop of unwatch) stop();
    if (streaming) client.sendSpeech({ type: 'audio_end', client_turn_id: base });
    streaming = false;
    voice.duck(false);
    on.closed(reason);
  };
  const unwatch = [
    client.onEvent((event) => {
      if (event.type === 'speech') speaking = true;
      if (event.type === 'playback') speaking = false;
      if (event.type === 'ended') return close('ended');
      if (event.type === 'error' && event.code.startsWith('speech_')) on.problem(event.code);
      if (event.type !== 'listening') return show({});
      const { frame } = event;
      if (frame.type === 'speech_started') {
        voice.duck(true);
        show({ phase: 'hearing' });
      } else if (frame.type === 'speech_stopped') show({ phase: 'listening' });
      else if (frame.type === 'transcript_partial') show({ partial: frame.text });
      else if (frame.type === 'interrupt') {
        voice.stop();
        speaking = false;
        show({});
      } else if (frame.type === 'resume') voice.duck(false);
      else close(frame.reason);
    }),
    client.onView((view) => {
      if (view.status !== 'open') return close('network');
      // A turn the service found in this mic (`{base}:{n}`) reached the conversation, before its reply:
      // this tab asked it by voice, so its reply is read out here, and its words are shown there now.
      for (const line of view.lines.filter((l) => !seen.has(l.key))) {
        seen.add(line.key);
        if (!line.clientTurnId?.startsWith(`${base}:`)) continue;
        client.expectVoice(line.clientTurnId);
        show({ partial: '' });
      }
    }),
  ];
  const language = client.chosenLanguage;
  streaming = client.sendSpeech({
    type: 'audio_start',
    mode: 'hands_free',
    client_turn_id: base,
    sample_rate: 16000,
    ...(language ? { language } : {}),
  });
  if (!streaming) close('network');
  show({});
  return { close: () => close('stopped') };
}
