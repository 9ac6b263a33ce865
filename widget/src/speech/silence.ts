/** Quiet after speech this long ends an utterance by itself (README, Voice in every browser). */
export const SILENCE_MS = 800;
/** Loudness (RMS of samples in -1..1) that counts as speech rather than a quiet room. */
export const SPEECH_RMS = 0.015;

/** Hears the end of an utterance in its loudness, chunk by chunk: true once speech was followed by {@link SILENCE_MS} of quiet. */
export function endOfSpeech(silenceMs = SILENCE_MS, speechRms = SPEECH_RMS): (rms: number, chunkMs: number) => boolean {
  let spoke = false;
  let quiet = 0;
  return (rms, chunkMs) => {
    if (rms >= speechRms) {
      spoke = true;
      quiet = 0;
      return false;
    }
    if (!spoke) return false;
    quiet += chunkMs;
    return quiet >= silenceMs;
  };
}
