import type { RecognitionSite, SynthesisSite } from '#protocol/frames';
import type { RecognitionSetting, SynthesisSetting } from '#protocol/speech-settings';

/**
 * Where one widget's speech is recognised (README, Voice in every browser): what the deployment
 * asks for, given whether the visitor's browser recognises speech and whether this service has a
 * recogniser. `auto` prefers the browser's, which costs the service nothing.
 */
export function recognitionSite(
  setting: RecognitionSetting,
  browserRecognition: boolean,
  serviceRecognises: boolean,
): RecognitionSite {
  if (setting === 'off') return 'none';
  if (setting === 'browser') return browserRecognition ? 'browser' : 'none';
  if (setting === 'service') return serviceRecognises ? 'service' : 'none';
  return browserRecognition ? 'browser' : serviceRecognises ? 'service' : 'none';
}

/**
 * Whether a widget whose browser recognises may fall back to the service's recogniser when the
 * browser's fails (README, Voice in every browser): only under `auto`, and only where there is one.
 */
export function recognitionFallback(
  setting: RecognitionSetting,
  browserRecognition: boolean,
  serviceRecognises: boolean,
): 'service' | undefined {
  return setting === 'auto' && browserRecognition && serviceRecognises ? 'service' : undefined;
}

/**
 * Whose voice reads one widget's replies out (README, The agent's own voice): `auto` and `service`
 * prefer the service's where it has a synthesiser, and fall back to the browser's, which every
 * widget can try; `off` speaks nothing.
 */
export function synthesisSite(setting: SynthesisSetting, serviceSynthesises: boolean): SynthesisSite {
  if (setting === 'off') return 'none';
  if (setting === 'browser') return 'browser';
  return serviceSynthesises ? 'service' : 'browser';
}
