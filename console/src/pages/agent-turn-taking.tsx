type Spec = Record<string, unknown>;

/** A number field of the spec: empty is the default, shown as the placeholder. */
function NumberField(props: {
  label: string;
  value: unknown;
  placeholder: number;
  min: number;
  max: number;
  disabled: boolean;
  onChange(value: number | undefined): void;
}) {
  return (
    <label>
      {props.label}
      <input
        type="number"
        min={props.min}
        max={props.max}
        value={typeof props.value === 'number' ? props.value : ''}
        placeholder={String(props.placeholder)}
        disabled={props.disabled}
        onInput={(e) => props.onChange(e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))}
      />
    </label>
  );
}

/** An object with `key` set, or left out when empty; undefined when nothing is left. */
function withField(object: Spec, key: string, value: unknown): Spec | undefined {
  const next: Spec = { ...object, [key]: value === '' ? undefined : value };
  if (next[key] === undefined) delete next[key];
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
  const endOfTurn = (voice.end_of_turn ?? {}) as Spec;
  const interruption = (voice.interruption ?? {}) as Spec;
  const set = (key: string, value: unknown) => onChange(withField(voice, key, value) ?? {});
  const setIn = (group: 'end_of_turn' | 'interruption', from: Spec) => (key: string, value: unknown) =>
    set(group, withField(from, key, value));
  const turn = setIn('end_of_turn', endOfTurn);
  const interrupt = setIn('interruption', interruption);
  const ignore = Array.isArray(interruption.ignore) ? (interruption.ignore as string[]).join(', ') : '';
  return (
    <fieldset>
      <legend>Hands-free conversation</legend>
      <p class="muted">
        When a deployment is hands-free, the visitor presses the mic once. A turn ends after a pause; the agent waits
        longer after words that sound unfinished ("and", "um", a number being read out) and less after a plain yes or
        no. Speaking over the agent stops it, but not "mm-hm" and the like.
      </p>
      <div class="grid">
        <NumberField
          label="Pause that ends a turn (ms)"
          value={endOfTurn.silence_ms}
          placeholder={600}
          min={200}
          max={5000}
          disabled={disabled}
          onChange={(v) => turn('silence_ms', v)}
        />
        <NumberField
          label="Longest wait after unfinished words (ms)"
          value={endOfTurn.max_silence_ms}
          placeholder={2000}
          min={200}
          max={10000}
          disabled={disabled}
          onChange={(v) => turn('max_silence_ms', v)}
        />
        <label>
          Eagerness to answer
          <select
            value={typeof endOfTurn.eagerness === 'string' ? endOfTurn.eagerness : 'normal'}
            disabled={disabled}
            onChange={(e) => turn('eagerness', e.currentTarget.value === 'normal' ? undefined : e.currentTarget.value)}
          >
            <option value="eager">Eager: answers sooner</option>
            <option value="normal">Normal</option>
            <option value="patient">Patient: waits longer</option>
          </select>
        </label>
        <NumberField
          label="Speech over the agent that stops it (ms)"
          value={interruption.min_speech_ms}
          placeholder={300}
          min={100}
          max={3000}
          disabled={disabled}
          onChange={(v) => interrupt('min_speech_ms', v)}
        />
        <NumberField
          label="Voice back after a false alarm (ms)"
          value={interruption.resume_after_ms}
          placeholder={1000}
          min={200}
          max={5000}
          disabled={disabled}
          onChange={(v) => interrupt('resume_after_ms', v)}
        />
        <label>
          Words that do not stop it (comma separated)
          <input
            value={ignore}
            placeholder="the language's: mm-hm, uh-huh, yeah, okay, …"
            disabled={disabled}
            onInput={(e) => {
              const words = e.currentTarget.value
                .split(',')
                .map((w) => w.trim())
                .filter(Boolean);
              interrupt('ignore', words.length ? words : undefined);
            }}
          />
        </label>
        <NumberField
          label="Ask if the visitor is still there after (s; 0: never)"
          value={voice.reengage_after_s}
          placeholder={10}
          min={0}
          max={600}
          disabled={disabled}
          onChange={(v) => set('reengage_after_s', v)}
        />
        <label>
          What it asks
          <input
            value={typeof voice.reengage_text === 'string' ? voice.reengage_text : ''}
            placeholder="Are you still there? (in the visitor's language)"
            disabled={disabled || (voice.reengage_text !== undefined && typeof voice.reengage_text !== 'string')}
            onInput={(e) => set('reengage_text', e.currentTarget.value.trim() ? e.currentTarget.value : undefined)}
          />
        </label>
        <NumberField
          label="Then close the mic after (s; 0: never)"
          value={voice.close_after_s}
          placeholder={20}
          min={0}
          max={600}
          disabled={disabled}
          onChange={(v) => set('close_after_s', v)}
        />
      </div>
    </fieldset>
  );
}
