import { useState } from 'preact/hooks';
import type { RecognitionSetting, SynthesisSetting, VoiceMode } from '#protocol/speech-settings';
import { speechRecognitionSettings, speechSynthesisSettings, voiceModes } from '#protocol/speech-settings';
import { list, path, put } from '../api';
import {
  type ConnectionFields,
  type LimitFields,
  languagesOf,
  originsOf,
  type PersonWaitFields,
  settingsFieldsOf,
  settingsUpdate,
  type ThemeFields,
  type VoiceFields,
} from '../deployment-settings';
import { languageProblems, originProblems } from '../form-checks';
import type { AgentVersion, Deployment } from '../types';
import { PrivacyFieldset } from './deployment-privacy';
import { ActionForm, ErrorNote, LocaleOptions, NumberField, useAction, useLoad, VoiceSample } from '../ui';

/** A fieldset of the settings form: its group of fields, and how it changes them. */
interface FieldsetProps<F> {
  value: F;
  onChange(value: F): void;
}

/** A setter for one field of a group. */
const setter =
  <F,>({ value, onChange }: FieldsetProps<F>) =>
  <K extends keyof F>(key: K) =>
  (next: F[K]) =>
    onChange({ ...value, [key]: next });

/** A deployment's settings (README, Deployments), a fieldset per group; saved as one update. */
export function Settings({ dep, onSaved }: { dep: Deployment; onSaved(d: Deployment): void }) {
  const [fields, setFields] = useState(() => settingsFieldsOf(dep));
  const [warnings, setWarnings] = useState<{ path: string; message: string }[]>([]);
  const group =
    <K extends keyof typeof fields>(key: K) =>
    (value: (typeof fields)[K]) =>
      setFields((all) => ({ ...all, [key]: value }));
  const save = useAction(async () => {
    const { data, meta } = await put<Deployment>(path`/api/v1/deployments/${dep.id}`, settingsUpdate(dep, fields));
    setWarnings(meta.warnings ?? []);
    onSaved(data);
  });
  return (
    <ActionForm onRun={() => void save.start()}>
      <h2>Settings</h2>
      <ConnectionFieldset dep={dep} value={fields.connection} onChange={group('connection')} />
      <ThemeFieldset dep={dep} value={fields.theme} onChange={group('theme')} />
      <fieldset>
        <legend>Engagement and timeouts</legend>
        <div class="grid">
          <LimitsFields value={fields.limits} onChange={group('limits')} />
          <VoiceFields value={fields.voice} onChange={group('voice')} />
        </div>
        <p class="muted">
          Automatic recognition is the browser's where it has its own (Chrome), else the service's (the visitor's audio
          streamed to it). The automatic voice is the service's where it has one (espeak-ng, or a speech server such as
          Kokoro or Piper, the same in every browser, and it knows what each visitor heard), else the browser's.
          Hands-free (automatic where the service recognises the visitor's speech): one press opens the mic, the service
          finds where each question ends, and the visitor can talk over the agent to stop it; how long it waits and what
          interrupts it are the agent's voice settings. Press to talk: one press per question.
        </p>
        <VoiceSample agentId={dep.agent_id} />
      </fieldset>
      <PersonWaitFieldset value={fields.personWait} onChange={group('personWait')} />
      <PrivacyFieldset value={fields.privacy} onChange={group('privacy')} saved={settingsFieldsOf(dep).privacy.keep} />
      <ErrorNote error={save.error} />
      {warnings.map((w) => (
        <p key={w.path} class="warn">
          <code>{w.path}</code>: {w.message}
        </p>
      ))}
      <button type="submit" disabled={save.busy}>
        Save settings
      </button>
    </ActionForm>
  );
}

function ConnectionFieldset({ dep, ...props }: FieldsetProps<ConnectionFields> & { dep: Deployment }) {
  const { value } = props;
  const set = setter(props);
  const versions = useLoad(
    () => list<AgentVersion>(path`/api/v1/agents/${dep.agent_id}/versions?per_page=100`),
    [dep.agent_id],
  );
  return (
    <>
      <div class="grid">
        <label>
          Hook URL (each turn is POSTed here, signed)
          <input type="url" value={value.hookUrl} onInput={(e) => set('hookUrl')(e.currentTarget.value)} />
        </label>
        <label>
          Transcript hook URL (optional)
          <input type="url" value={value.transcriptUrl} onInput={(e) => set('transcriptUrl')(e.currentTarget.value)} />
        </label>
        <label>
          Environment
          <select
            value={value.environment}
            onChange={(e) => set('environment')(e.currentTarget.value as Deployment['environment'])}
          >
            <option value="production">production</option>
            <option value="staging">staging</option>
            <option value="development">development</option>
          </select>
        </label>
        <label>
          Who speaks first
          <select
            value={value.direction}
            onChange={(e) => set('direction')(e.currentTarget.value as Deployment['call_direction'])}
          >
            <option value="inbound">The visitor (inbound)</option>
            <option value="outbound">The agent's greeting (outbound)</option>
          </select>
        </label>
        <label>
          Agent version
          <select value={value.version} onChange={(e) => set('version')(e.currentTarget.value)}>
            <option value="">Latest published</option>
            {versions.data?.data.map((v) => (
              <option key={v.version} value={v.version}>
                Pinned to v{v.version}
              </option>
            ))}
          </select>
        </label>
        <label>
          Or split new conversations between versions (version:weight, such as 1:50, 2:50; a visitor keeps theirs;
          Analytics compares them)
          <input value={value.split} placeholder="1:50, 2:50" onInput={(e) => set('split')(e.currentTarget.value)} />
        </label>
      </div>
      <label>
        Allowed origins (one per line, e.g. https://www.example.com)
        <textarea rows={3} value={value.origins} onInput={(e) => set('origins')(e.currentTarget.value)} />
      </label>
      {originProblems(originsOf(value)).map((p) => (
        <p key={p} class="warn">
          {p}
        </p>
      ))}
    </>
  );
}

function ThemeFieldset({ dep, ...props }: FieldsetProps<ThemeFields> & { dep: Deployment }) {
  const { value } = props;
  const set = setter(props);
  const [previewLocale, setPreviewLocale] = useState('en');
  return (
    <fieldset>
      <legend>Widget theme</legend>
      <div class="grid">
        <label>
          Title
          <input value={value.title} onInput={(e) => set('title')(e.currentTarget.value)} />
        </label>
        <label>
          Accent colour
          <input type="color" value={value.accent} onInput={(e) => set('accent')(e.currentTarget.value)} />
        </label>
        <label>
          Position
          <select value={value.position} onChange={(e) => set('position')(e.currentTarget.value)}>
            <option value="bottom-right">bottom-right</option>
            <option value="bottom-left">bottom-left</option>
          </select>
        </label>
      </div>
      <label>
        Languages in the widget's menu (such as de-DE, one per line; two or more show the menu, and the visitor's choice
        is each turn's language)
        <textarea rows={3} value={value.languages} onInput={(e) => set('languages')(e.currentTarget.value)} />
      </label>
      {languageProblems(languagesOf(value)).map((p) => (
        <p key={p} class="warn">
          {p}
        </p>
      ))}
      <div class="filters">
        <label>
          Preview the widget's words in
          <select value={previewLocale} onChange={(e) => setPreviewLocale(e.currentTarget.value)}>
            <LocaleOptions />
          </select>
        </label>
        <a href={`#/try/${dep.id}/${previewLocale}`}>Open the preview in Try it</a>
      </div>
      <div class={`preview preview-${value.position}`} aria-label="Theme preview">
        <div class="preview-panel">
          <div class="preview-head" ref={(el) => el?.style.setProperty('background', value.accent)}>
            {value.title || dep.agent_name}
          </div>
          <p>Hello! How can I help?</p>
        </div>
        <span class="preview-launcher" ref={(el) => el?.style.setProperty('background', value.accent)} />
      </div>
    </fieldset>
  );
}

function LimitsFields(props: FieldsetProps<LimitFields>) {
  const { value } = props;
  const set = setter(props);
  return (
    <>
      <NumberField
        label="Turns per conversation (default 200)"
        min={1}
        value={value.maxTurns}
        onInput={set('maxTurns')}
      />
      <NumberField label="Turns per minute (default 20)" min={1} value={value.perMinute} onInput={set('perMinute')} />
      <NumberField
        label="Hook timeout, ms (500–15000, default 5000)"
        min={500}
        max={15000}
        value={value.hookTimeout}
        onInput={set('hookTimeout')}
      />
      <NumberField
        label="Reply timeout, s (5–3600, default 120)"
        min={5}
        max={3600}
        value={value.replyTimeout}
        onInput={set('replyTimeout')}
      />
    </>
  );
}

/** Each setting in words: a setting the protocol adds fails to compile here until it has its words. */
const RECOGNITION_WORDS: Record<RecognitionSetting, string> = {
  auto: 'Automatic',
  browser: "The browser's only",
  service: "The service's",
  off: 'Off: text only',
};
const SYNTHESIS_WORDS: Record<SynthesisSetting, string> = {
  auto: 'Automatic',
  service: "The service's",
  browser: "The browser's",
  off: 'Off: shown, never spoken',
};

const MODE_WORDS: Record<VoiceMode | 'auto', string> = {
  auto: 'Automatic',
  hands_free: 'Hands-free',
  push_to_talk: 'Press to talk',
};

function VoiceFields(props: FieldsetProps<VoiceFields>) {
  const { value } = props;
  const set = setter(props);
  return (
    <>
      <ChoiceField
        label="Speech recognition"
        value={value.recognition}
        choices={speechRecognitionSettings}
        words={RECOGNITION_WORDS}
        onChange={set('recognition')}
      />
      <ChoiceField
        label="The agent's voice"
        value={value.synthesis}
        choices={speechSynthesisSettings}
        words={SYNTHESIS_WORDS}
        onChange={set('synthesis')}
      />
      <ChoiceField
        label="How visitors talk"
        value={value.mode}
        choices={['auto', ...voiceModes]}
        words={MODE_WORDS}
        onChange={set('mode')}
      />
    </>
  );
}

/** A select of the protocol's values, each in words. */
function ChoiceField<T extends string>(props: {
  label: string;
  value: T;
  choices: readonly T[];
  words: Record<T, string>;
  onChange(value: T): void;
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as T)}>
        {props.choices.map((choice) => (
          <option key={choice} value={choice}>
            {props.words[choice]}
          </option>
        ))}
      </select>
    </label>
  );
}

function PersonWaitFieldset(props: FieldsetProps<PersonWaitFields>) {
  const { value } = props;
  const set = setter(props);
  return (
    <fieldset>
      <legend>When a visitor waits for a person</legend>
      <p class="muted">
        A visitor who asked for a person (or whom your hook handed over) and whom nobody has taken over yet is told
        once, after this wait. The Inbox shows the request ageing meanwhile.
      </p>
      <div class="grid">
        <NumberField
          label="Tell them after, s (0 never; default 300)"
          min={0}
          max={86400}
          value={value.noticeS}
          onInput={set('noticeS')}
        />
      </div>
      <label>
        What they are told (empty: the widget's own words in their language, saying nobody is free yet and their message
        is kept)
        <textarea
          rows={2}
          maxLength={1000}
          value={value.notice}
          onInput={(e) => set('notice')(e.currentTarget.value)}
        />
      </label>
    </fieldset>
  );
}
