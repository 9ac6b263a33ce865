import { type KeepMode, keepModes, modelKinds, type RedactionKind, redactionKinds } from '#protocol/privacy';
import type { PrivacyFields } from '../deployment-settings';
import { NumberField } from '../ui';

/** Each mode in words: a mode the protocol adds fails to compile here until it has its words. */
const KEEP_WORDS: Record<KeepMode, string> = {
  everything: 'Every word, as said',
  redacted: 'The words, with personal values replaced',
  metadata: 'No words at all: timing, lengths, outcomes and ratings only',
};
const KIND_WORDS: Record<RedactionKind, string> = {
  email: 'Email addresses',
  phone: 'Phone numbers',
  card: 'Card numbers (Luhn-checked)',
  iban: 'IBANs (check digits)',
  name: "People's names (by a model)",
  address: 'Postal addresses (by a model)',
};

/** What the deployment keeps of its conversations (README, Privacy: what is kept). */
export function PrivacyFieldset({
  value,
  onChange,
  saved,
}: {
  value: PrivacyFields;
  onChange(value: PrivacyFields): void;
  /** What the deployment keeps now: a change is told to apply from the next thing stored. */
  saved: KeepMode;
}) {
  const toggle = (kind: RedactionKind, on: boolean) =>
    onChange({ ...value, redact: redactionKinds.filter((k) => (k === kind ? on : value.redact.includes(k))) });
  return (
    <fieldset>
      <legend>Privacy: what is kept</legend>
      <p class="muted">
        What the visitor and the agent say is redacted before anything is stored: the history and its search, exports,
        transcript events, delivery records, analytics. Your hook, the model and tools still get the words as said, and
        so does the visitor's open widget; a reconnecting widget shows what is kept.
      </p>
      <div class="grid">
        <label>
          Keep
          <select value={value.keep} onChange={(e) => onChange({ ...value, keep: e.currentTarget.value as KeepMode })}>
            {keepModes.map((mode) => (
              <option key={mode} value={mode}>
                {KEEP_WORDS[mode]}
              </option>
            ))}
          </select>
        </label>
        <NumberField
          label="Delete ended conversations after, days (empty: the service's retention)"
          min={1}
          max={3650}
          value={value.retentionDays}
          onInput={(days) => onChange({ ...value, retentionDays: days })}
        />
      </div>
      {value.keep === 'redacted' && (
        <div class="checks" role="group" aria-label="Values replaced">
          {redactionKinds.map((kind) => (
            <label key={kind} class="check">
              <input
                type="checkbox"
                checked={value.redact.includes(kind)}
                onChange={(e) => toggle(kind, e.currentTarget.checked)}
              />
              {KIND_WORDS[kind]}, stored as <code>[{kind}]</code>
            </label>
          ))}
        </div>
      )}
      {value.keep === 'redacted' && modelKinds.some((kind) => value.redact.includes(kind)) && (
        <p class="muted">
          Names and addresses are found by the agent's evaluation model (else its own, else the service's) before each
          visitor turn is stored, and redacted wherever the conversation says them again; a turn waits up to 3 s for it.
          Without a model they are not found.
        </p>
      )}
      {value.keep === 'metadata' && (
        <p class="muted">
          Conversations show their turns without words, and are not analysed: an analysis needs the words.
        </p>
      )}
      {value.keep !== saved && (
        <p class="warn">
          This applies to what is stored from then on: what is already stored stays as it was kept. The audit log
          records the change.
        </p>
      )}
    </fieldset>
  );
}
