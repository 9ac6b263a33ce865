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

/**
 * How the visitor talks (README, Hands-free voice): the mic open the whole time, the service finding
 * each turn and the visitor speaking over the agent; or one press per utterance. A deployment's
 * `runtime_config.voice_mode` is one of these, or absent (`auto` in the console): hands-free where
 * the service recognises.
 */
export const voiceModes = ['hands_free', 'push_to_talk'] as const;
export type VoiceMode = (typeof voiceModes)[number];
