import { endOfSpeech } from './silence';

/** The microphone, captured for the service: stop it to release the device. */
export interface Capture {
  stop(): void;
}

const CHUNK_MS = 100;
const RESUME_WAIT_MS = 2_000;

/**
 * Captures the visitor's voice (echo cancellation, noise suppression and auto gain on) as 16 kHz
 * 16-bit mono PCM, 100 ms at a time with its loudness, and, given `onQuiet`, says when speech has
 * been followed by 0.8 s of quiet (push-to-talk; hands-free leaves that to the service). Fetched on
 * first use, with its worklet, so the script tag stays small. Rejects with the browser's error (a
 * `NotAllowedError` when the microphone is refused).
 */
export async function capture(
  onAudio: (pcm: ArrayBuffer, rms: number) => void,
  onQuiet?: () => void,
): Promise<Capture> {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
  });
  const context = new AudioContext();
  const release = () => {
    for (const track of stream.getTracks()) track.stop();
    void context.close();
  };
  try {
    await context.audioWorklet.addModule(new URL('./pcm-worklet.js', import.meta.url));
  } catch (err) {
    release();
    throw err;
  }
  // A context made after an await may start suspended (autoplay rules): the mic press lets it run.
  // One that still does not run (a browser with no audio device) would capture nothing: said at once.
  if (context.state === 'suspended') {
    const running = await Promise.race([
      context.resume().then(() => true),
      new Promise<false>((resolve) => setTimeout(resolve, RESUME_WAIT_MS, false)),
    ]);
    if (!running) {
      release();
      throw new Error('the audio context does not run here (no audio device)');
    }
  }
  const source = context.createMediaStreamSource(stream);
  const node = new AudioWorkletNode(context, 'concierge-pcm-16k');
  const ended = endOfSpeech();
  let quietSaid = false;
  node.port.onmessage = ({ data }: MessageEvent<{ pcm: ArrayBuffer; rms: number }>) => {
    onAudio(data.pcm, data.rms);
    if (onQuiet && !quietSaid && ended(data.rms, CHUNK_MS)) {
      quietSaid = true;
      onQuiet();
    }
  };
  source.connect(node);
  // Pulled by the output like any node; it writes nothing there, so nothing is heard.
  node.connect(context.destination);
  return {
    stop() {
      node.port.onmessage = null;
      source.disconnect();
      node.disconnect();
      release();
    },
  };
}
