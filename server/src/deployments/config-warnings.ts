import type { z } from 'zod';
import { widgetTheme } from '#protocol/frames';
import { channelConfigSchema, engagementRulesSchema, runtimeConfigSchema } from './deployment.schemas.js';

export interface ConfigWarning {
  path: string;
  message: string;
}

type Settings = Partial<Record<'channel_config' | 'engagement_rules' | 'runtime_config', unknown>>;

/** The keys the service reads in each free-form object: the schemas' own, so the two cannot drift. */
const known = (schema: z.ZodObject) => Object.keys(schema.shape);
const READ_KEYS: Record<keyof Settings, string[]> = {
  channel_config: known(channelConfigSchema),
  engagement_rules: known(engagementRulesSchema),
  runtime_config: known(runtimeConfigSchema),
};
const WIDGET_KEYS = known(widgetTheme);

/** What this service can do that a deployment's settings may count on. */
export interface ServiceAbilities {
  /** Whether it recognises speech itself (SPEECH_TO_TEXT or SPEECH_TO_TEXT_URL, README: Voice in every browser). */
  recognisesSpeech: boolean;
  /** Whether it speaks itself (TEXT_TO_SPEECH or TEXT_TO_SPEECH_URL, README: The agent's own voice). */
  synthesisesSpeech: boolean;
}

/**
 * What a deployment's settings ask that will not work as written. Keys the service does not read
 * are stored as sent (the objects are the customer's), but a typo such as `hookUrl` would otherwise
 * go unnoticed until activation or, worse, until a visitor's turn; each is named with the key it
 * most likely meant. A choice this service cannot serve (its recogniser, when it has none) is named too.
 */
export function configWarnings(settings: Settings, abilities: ServiceAbilities): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const runtime = settings.runtime_config;
  if (isObject(runtime) && runtime.speech_recognition === 'service' && !abilities.recognisesSpeech)
    warnings.push({
      path: 'runtime_config.speech_recognition',
      message:
        'this service recognises no speech (SPEECH_TO_TEXT or SPEECH_TO_TEXT_URL is not set): until it does, visitors are told voice is not available and to type',
    });
  if (isObject(runtime) && runtime.voice_mode === 'hands_free' && !abilities.recognisesSpeech)
    warnings.push({
      path: 'runtime_config.voice_mode',
      message:
        "hands-free voice needs the service's recognition (SPEECH_TO_TEXT or SPEECH_TO_TEXT_URL is not set): until it has one, visitors press the mic for each utterance",
    });
  if (isObject(runtime) && runtime.speech_synthesis === 'service' && !abilities.synthesisesSpeech)
    warnings.push({
      path: 'runtime_config.speech_synthesis',
      message:
        "this service has no voice of its own (TEXT_TO_SPEECH or TEXT_TO_SPEECH_URL is not set): until it does, replies are spoken in the browser's voice",
    });
  for (const [name, keys] of Object.entries(READ_KEYS) as [keyof Settings, string[]][]) {
    const value = settings[name];
    if (!isObject(value)) continue;
    warnings.push(...unknownKeys(value, keys, name));
    if (name === 'channel_config' && isObject(value.widget))
      warnings.push(...unknownKeys(value.widget, WIDGET_KEYS, 'channel_config.widget'));
  }
  return warnings;
}

function unknownKeys(value: Record<string, unknown>, keys: readonly string[], at: string): ConfigWarning[] {
  return Object.keys(value)
    .filter((key) => !keys.includes(key))
    .map((key) => {
      const meant = likelyMeant(key, keys);
      return {
        path: `${at}.${key}`,
        message: meant
          ? `unknown key, did you mean ${meant}?`
          : `unknown key, stored as sent but not read (known: ${keys.join(', ')})`,
      };
    });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const folded = (key: string) => key.toLowerCase().replace(/[-_\s]/g, '');

/** The known key spelled the same up to case and separators, else the nearest within a couple of typos. */
function likelyMeant(key: string, keys: readonly string[]): string | undefined {
  const typed = folded(key);
  const same = keys.find((k) => folded(k) === typed);
  if (same) return same;
  let best: { key: string; distance: number } | undefined;
  for (const candidate of keys) {
    const distance = editDistance(typed, folded(candidate));
    if (distance <= Math.max(1, Math.floor(candidate.length / 4)) && (!best || distance < best.distance))
      best = { key: candidate, distance };
  }
  return best?.key;
}

/** Levenshtein distance; the keys are short, so the plain two-row table is enough. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
