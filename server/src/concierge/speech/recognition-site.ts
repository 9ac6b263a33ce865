import type { RecognitionSite } from '#protocol/frames';

/** A deployment's `runtime_config.speech_recognition`. */
export type RecognitionSetting = 'auto' | 'browser' | 'service' | 'off';

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
