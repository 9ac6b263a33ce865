import { NumberField } from '../ui';

type Spec = Record<string, unknown>;
type Group = 'end_of_turn' | 'interruption' | undefined;

/** One number of the spec's `voice`: in a group (`end_of_turn`, `interruption`) or at its top; empty is its default. */
interface NumberSetting {
  group: Group;
  key: string;
  label: string;
  default: number;
  min: number;
  max: number;
}

const TURN: NumberSetting[] = [
  { group: 'end_of_turn', key: 'silence_ms', label: 'Pause that ends a turn (ms)', default: 600, min: 200, max: 5000 },
  {
    group: 'end_of_turn',
    key: 'max_silence_ms',
    label: 'Longest wait after unfinished words (ms)',
    default: 2000,
    min: 200,
    max: 10_000,
  },
];
const INTERRUPTION: NumberSetting[] = [
  {
    group: 'interruption',
    key: 'min_speech_ms',
    label: 'Speech over the agent that stops it (ms)',
    default: 300,
    min: 100,
    max: 3000,
  },
  {
    group: 'interruption',
    key: 'resume_after_ms',
    label: 'Voice back after a false alarm (ms)',
    default: 1000,
    min: 200,
    max: 5000,
  },
];
const REENGAGE: NumberSetting = {
  group: undefined,
  key: 'reengage_after_s',
  label: 'Ask if the visitor is still there after (s; 0: never)',
  default: 10,
  min: 0,
  max: 600,
};
const CLOSE: NumberSetting = {
  group: undefined,
  key: 'close_after_s',
  label: 'Then close the mic after (s; 0: never)',
  default: 20,
  min: 0,
  max: 600,
};

/** An object with `key` set, or left out when undefined; undefined when nothing is left. */
function withField(object: Spec, key: string, value: unknown): Spec | undefined {
  const next: Spec = { ...object, [key]: value };
  if (value === undefined) delete next[key];
  return Object.keys(next).length ? next : undefined;
}

/**
 * How the agent takes turns with a hands-free visitor (README, Hands-free voice): the spec's
 * `voice.end_of_turn`, `voice.interruption`, and what it does when the visitor goes quiet. Every
 * field empty is its default, shown as the placeholder; publishing checks the values.
 */
export function TurnTakingEditor({
  voice,
  disabled,
  onChange,
}: {
  voice: Spec;
  disabled: boolean;
  onChange(next: Spec): void;
}) {
  const groupOf = (group: Group) => (group ? ((voice[group] ?? {}) as Spec) : voice);
  const set = (group: Group, key: string, value: unknown) =>
    onChange(
      group
        ? (withField(voice, group, withField(groupOf(group), key, value)) ?? {})
        : (withField(voice, key, value) ?? {}),
    );
  const number = (setting: NumberSetting) => {
    const value = groupOf(setting.group)[setting.key];
    return (
      <NumberField
        key={setting.key}
        label={setting.label}
        value={typeof value === 'number' ? String(value) : ''}
        placeholder={String(setting.default)}
        min={setting.min}
        max={setting.max}
        disabled={disabled}
        onInput={(v) => set(setting.group, setting.key, v === '' ? undefined : Number(v))}
      />
    );
  };
  const { eagerness } = groupOf('end_of_turn');
  const { ignore } = groupOf('interruption');
  return (
    <fieldset>
      <legend>Hands-free conversation</legend>
      <p class="muted">
        When a deployment is hands-free, the visitor presses the mic once. A turn ends after a pause; the agent waits
        longer after words that sound unfinished ("and", "um", a number being read out) and less after a plain yes or
        no. Speaking over the agent stops it, but not "mm-hm" and the like.
      </p>
      <div class="grid">
        {TURN.map(number)}
        <label>
          Eagerness to answer
          <select
            value={typeof eagerness === 'string' ? eagerness : 'normal'}
            disabled={disabled}
            onChange={(e) =>
              set('end_of_turn', 'eagerness', e.currentTarget.value === 'normal' ? undefined : e.currentTarget.value)
            }
          >
            <option value="eager">Eager: answers sooner</option>
            <option value="normal">Normal</option>
            <option value="patient">Patient: waits longer</option>
          </select>
        </label>
        {INTERRUPTION.map(number)}
        <label>
          Words that do not stop it (comma separated; empty: the language's own)
          <input
            value={Array.isArray(ignore) ? ignore.join(', ') : ''}
            placeholder="mm-hm, uh-huh, yeah, okay…"
            disabled={disabled}
            onInput={(e) => {
              const words = e.currentTarget.value
                .split(',')
                .map((w) => w.trim())
                .filter(Boolean);
              set('interruption', 'ignore', words.length ? words : undefined);
            }}
          />
        </label>
        {number(REENGAGE)}
        <label>
          What it asks (empty: in the visitor's language)
          <input
            value={typeof voice.reengage_text === 'string' ? voice.reengage_text : ''}
            placeholder="Are you still there?"
            // Words per language are edited in the JSON below.
            disabled={disabled || (voice.reengage_text !== undefined && typeof voice.reengage_text !== 'string')}
            onInput={(e) =>
              set(undefined, 'reengage_text', e.currentTarget.value.trim() ? e.currentTarget.value : undefined)
            }
          />
        </label>
        {number(CLOSE)}
      </div>
    </fieldset>
  );
}
