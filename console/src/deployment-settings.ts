import type { RecognitionSetting, SynthesisSetting, VoiceMode } from '#protocol/speech-settings';
import { type KeepMode, patternKinds, type RedactionKind } from '#protocol/privacy';
import type { Deployment } from './types';

type Json = Record<string, unknown>;

/** Where the widget's turns go, and which agent answers them. */
export interface ConnectionFields {
  hookUrl: string;
  transcriptUrl: string;
  /** One origin per line. */
  origins: string;
  environment: Deployment['environment'];
  direction: Deployment['call_direction'];
  /** A pinned version, or '' for the latest published. */
  version: string;
  /** New conversations split between versions (README, Tests and analysis): `1:50, 2:50`; '' for none. */
  split: string;
}

/** How the widget looks, and the languages in its menu (one per line). */
export interface ThemeFields {
  title: string;
  accent: string;
  position: string;
  languages: string;
}

/** What a conversation may ask, and how long replies may take ('' for the default). */
export interface LimitFields {
  maxTurns: string;
  perMinute: string;
  hookTimeout: string;
  replyTimeout: string;
}

export interface VoiceFields {
  recognition: RecognitionSetting;
  synthesis: SynthesisSetting;
  /** How the visitor talks (README, Hands-free voice); `auto`: the setting left out, hands-free where the service hears. */
  mode: VoiceMode | 'auto';
}

/** What a visitor waiting for a person is told, and after how long ('' for the default). */
export interface PersonWaitFields {
  noticeS: string;
  notice: string;
}

/** What is kept of what is said (README, Privacy: what is kept), and how many days ('' for the service's own). */
export interface PrivacyFields {
  keep: KeepMode;
  redact: RedactionKind[];
  retentionDays: string;
}

/** The deployment settings form: one typed group per fieldset. */
export interface SettingsFields {
  connection: ConnectionFields;
  theme: ThemeFields;
  limits: LimitFields;
  voice: VoiceFields;
  personWait: PersonWaitFields;
  privacy: PrivacyFields;
}

const text = (value: unknown, otherwise = ''): string =>
  value === undefined || value === null ? otherwise : String(value);
const lines = (value: unknown): string => ((value as string[] | undefined) ?? []).join('\n');
const num = (v: string) => (v === '' ? undefined : Number(v));

/** A list as the form's text holds it: one per line (or, for languages, comma-separated too). */
export const originsOf = (fields: ConnectionFields): string[] => fields.origins.split(/\s+/).filter(Boolean);
export const languagesOf = (fields: ThemeFields): string[] => fields.languages.split(/[\s,]+/).filter(Boolean);

/** `1:50, 2:50` as the API takes it (null: no split); throws, saying how to write it, when it is not that. */
export function versionSharesOf(text: string): { version: number; weight: number }[] | null {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (!entries.length) return null;
  return entries.map((entry) => {
    const m = /^v?(\d+)\s*:\s*(\d+)$/.exec(entry);
    if (!m)
      throw new Error(
        `Split between versions: “${entry}” is not version:weight; write them comma-separated, such as 1:50, 2:50`,
      );
    return { version: Number(m[1]), weight: Number(m[2]) };
  });
}

/** The form as a deployment's settings fill it. */
export function settingsFieldsOf(dep: Deployment): SettingsFields {
  const channel = dep.channel_config as Json;
  const theme = (channel.widget ?? {}) as Json;
  const rules = dep.engagement_rules as Json;
  const runtime = dep.runtime_config as Json;
  return {
    connection: {
      hookUrl: text(channel.hook_url),
      transcriptUrl: text(channel.transcript_hook_url),
      origins: lines(channel.allowed_origins),
      environment: dep.environment,
      direction: dep.call_direction,
      version: text(dep.agent_version),
      split: (dep.versions ?? []).map((s) => `${s.version}:${s.weight}`).join(', '),
    },
    theme: {
      title: text(theme.title),
      accent: text(theme.accent_color, '#1d4ed8'),
      position: text(theme.position, 'bottom-right'),
      languages: lines(theme.languages),
    },
    limits: {
      maxTurns: text(rules.max_turns_per_conversation),
      perMinute: text(rules.turns_per_minute),
      hookTimeout: text(runtime.hook_timeout_ms),
      replyTimeout: text(runtime.reply_timeout_s),
    },
    voice: {
      recognition: (runtime.speech_recognition as RecognitionSetting | undefined) ?? 'auto',
      synthesis: (runtime.speech_synthesis as SynthesisSetting | undefined) ?? 'auto',
      mode: (runtime.voice_mode as VoiceMode | undefined) ?? 'auto',
    },
    personWait: { noticeS: text(runtime.person_wait_notice_s), notice: text(runtime.person_wait_notice) },
    privacy: privacyFieldsOf(runtime.privacy as Json | undefined),
  };
}

function privacyFieldsOf(privacy: Json | undefined): PrivacyFields {
  return {
    keep: (privacy?.keep as KeepMode | undefined) ?? 'everything',
    redact: (privacy?.redact as RedactionKind[] | undefined) ?? [...patternKinds],
    retentionDays: text(privacy?.retention_days),
  };
}

/** `runtime_config.privacy` as the form sets it; absent when it keeps everything for the service's days. */
function privacyOf({ keep, redact, retentionDays }: PrivacyFields) {
  if (keep === 'everything' && retentionDays === '') return undefined;
  return {
    keep,
    ...(keep === 'redacted' && redact.join() !== patternKinds.join() ? { redact } : {}),
    retention_days: num(retentionDays),
  };
}

/**
 * The body of `PUT /api/v1/deployments/{id}` the form sends: what it edits, over what the
 * deployment holds that the form does not show (kept as it is). An empty field is the default.
 */
export function settingsUpdate(dep: Deployment, fields: SettingsFields) {
  const channel = dep.channel_config as Json;
  const { connection, theme, limits, voice, personWait, privacy } = fields;
  const languages = languagesOf(theme);
  return {
    agent_version: connection.version === '' ? null : Number(connection.version),
    versions: versionSharesOf(connection.split),
    environment: connection.environment,
    call_direction: connection.direction,
    channel_config: {
      ...channel,
      hook_url: connection.hookUrl || undefined,
      transcript_hook_url: connection.transcriptUrl || undefined,
      allowed_origins: originsOf(connection),
      widget: {
        ...((channel.widget ?? {}) as Json),
        title: theme.title || undefined,
        accent_color: theme.accent,
        position: theme.position,
        languages: languages.length ? languages : undefined,
      },
    },
    engagement_rules: {
      ...(dep.engagement_rules as Json),
      max_turns_per_conversation: num(limits.maxTurns),
      turns_per_minute: num(limits.perMinute),
    },
    runtime_config: {
      ...(dep.runtime_config as Json),
      hook_timeout_ms: num(limits.hookTimeout),
      reply_timeout_s: num(limits.replyTimeout),
      speech_recognition: voice.recognition,
      speech_synthesis: voice.synthesis,
      voice_mode: voice.mode === 'auto' ? undefined : voice.mode,
      person_wait_notice_s: num(personWait.noticeS),
      person_wait_notice: personWait.notice.trim() || undefined,
      privacy: privacyOf(privacy),
    },
  };
}
