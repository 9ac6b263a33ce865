/**
 * A deployment's `runtime_config.speech_recognition` (README, Voice in every browser): where the
 * visitor's speech is recognised. `auto` prefers the browser's; `off` makes the widget text only.
 */
export const speechRecognitionSettings = ['auto', 'browser', 'service', 'off'] as const;
export type RecognitionSetting = (typeof speechRecognitionSettings)[number];

/**
 * A deployment's `runtime_config.speech_synthesis` (README, The agent's own voice): whose voice
 * reads replies out. `auto` prefers the service's where it has one; `off` speaks nothing.
 */
export const speechSynthesisSettings = ['auto', 'service', 'browser', 'off'] as const;
export type SynthesisSetting = (typeof speechSynthesisSettings)[number];
