import type { SessionClient } from '../session/client';
import { t } from '../ui/words';
import type { Capture } from './capture';
import { ListenError, type Speech } from './speech';

/** What a failed `getUserMedia` says, in the words the browser's recognition uses for the same. */
export function micReason(err: unknown): string {
  const name = (err as { name?: string } | null)?.name;
  if (name === 'NotAllowedError' || name === 'SecurityError') return 'not-allowed';
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'audio-capture';
  return 'unavailable';
}

/** Whether this browser can capture audio for the service (a secure page with an AudioWorklet). */
export const canCapture = (win: Window = window): boolean =>
  typeof win.navigator.mediaDevices?.getUserMedia === 'function' &&
  typeof (win as unknown as { AudioWorkletNode?: unknown }).AudioWorkletNode === 'function' &&
  win.isSecureContext;

type LoadCapture = () => Promise<{
  capture: (onAudio: (pcm: ArrayBuffer) => void, onQuiet: () => void) => Promise<Capture>;
}>;

/**
 * Listening through the service's recogniser (README, Voice in every browser): the microphone's
 * audio streamed over the session's socket until 0.8 s of quiet after speech, or a second press.
 * It resolves with no words: the turn comes back from the service and shows in the transcript. Its
 * states show as the interim text (sending, transcribing); a refusal rejects with its `speech_*` code.
 */
export function serviceListener(
  client: SessionClient,
  load: LoadCapture = () => import('./capture'),
): Pick<Speech, 'listen' | 'stopListening'> {
  let finish: (() => void) | undefined;
  // A second press before the microphone is open: nothing is sent.
  let stopEarly = false;
  return {
    async listen(_language, onInterim) {
      stopEarly = false;
      const { capture } = await load().catch(() => {
        throw new ListenError('unavailable');
      });
      const id = crypto.randomUUID();
      let captured: Capture;
      try {
        captured = await capture(
          (pcm) => client.sendSpeech(pcm),
          () => finish?.(),
        );
      } catch (err) {
        throw new ListenError(micReason(err));
      }
      if (stopEarly) {
        captured.stop();
        return '';
      }
      const unwatch: (() => void)[] = [];
      let capturing = true;
      const release = () => {
        if (capturing) captured.stop();
        capturing = false;
      };
      return new Promise<string>((resolve, reject) => {
        const done = (reason?: string) => {
          finish = undefined;
          release();
          for (const stop of unwatch.splice(0)) stop();
          if (reason) reject(new ListenError(reason));
          else resolve('');
        };
        unwatch.push(
          client.onEvent((event) => {
            if (event.type === 'transcribing' && event.clientTurnId === id) onInterim(t('transcribing'));
            if (event.type === 'error' && event.code.startsWith('speech_')) done(event.code);
          }),
          client.onView((view) => {
            // The turn made of it is in the transcript: done. A lost socket loses the utterance with it.
            if (view.lines.some((l) => l.clientTurnId === id)) done();
            else if (view.status !== 'open') done('network');
          }),
        );
        client.expectVoice(id);
        if (
          !client.sendSpeech({
            type: 'audio_start',
            client_turn_id: id,
            sample_rate: 16000,
            ...(client.chosenLanguage ? { language: client.chosenLanguage } : {}),
          })
        )
          return done('network');
        finish = () => {
          finish = undefined;
          release();
          onInterim(t('sending_audio'));
          client.sendSpeech({ type: 'audio_end', client_turn_id: id });
        };
      });
    },
    stopListening() {
      if (finish) finish();
      else stopEarly = true;
    },
  };
}
