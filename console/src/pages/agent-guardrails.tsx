import { useState } from 'preact/hooks';
import { isKnownVariable, SERVICE_VARIABLES, specVariables } from '#protocol/templates';
import { criteriaAsLines, customCriteriaOf, linesOf } from '../spec-fields';

type Spec = Record<string, unknown>;

interface GuardrailsDraft {
  topics?: { allowed: string[] };
  refuse_text?: string;
  blocked_terms?: string[];
  injection?: boolean;
  custom?: { criterion: string; action: string }[];
}

/** Where a variable's value comes from, in words. */
export function variableSource(name: string): string {
  if (name === 'visitor.name') return "the user token's name";
  if (name.startsWith('ctx.')) return `the user token's ctx (${name.slice(4)})`;
  if (name.startsWith('page.context.')) return `the page's Concierge.setContext (${name.slice(13)})`;
  if ((SERVICE_VARIABLES as readonly string[]).includes(name)) return 'the service';
  return 'nothing: publishing refuses it';
}

/** The variables the draft uses (README, Variables and guardrails): each name, its default, where its value comes from. */
export function VariablesUsed({ spec }: { spec: Spec | undefined }) {
  const used = spec ? specVariables(spec) : [];
  return (
    <fieldset class="variables">
      <legend>Variables</legend>
      <p class="muted">
        Write <code>{'{{visitor.name|there}}'}</code> in the greeting, persona, instructions or a tool's URL and body:{' '}
        <code>{'{{ctx.KEY}}'}</code> from your user token, <code>{'{{page.context.KEY}}'}</code> from the page, or{' '}
        {SERVICE_VARIABLES.map((v, i) => (
          <span key={v}>
            {i ? ', ' : ''}
            <code>{`{{${v}}}`}</code>
          </span>
        ))}
        . Values are data: quoted for the model, percent-encoded in a URL, never instructions.
      </p>
      {used.length ? (
        <table class="list">
          <thead>
            <tr>
              <th>Variable</th>
              <th>Default</th>
              <th>Filled from</th>
            </tr>
          </thead>
          <tbody>
            {used.map((v) => (
              <tr key={v.name} class={isKnownVariable(v.name) ? undefined : 'warn'}>
                <td>
                  <code>{v.name}</code>
                </td>
                <td>{v.fallback === undefined ? <span class="muted">(empty)</span> : v.fallback || '(empty)'}</td>
                <td>{variableSource(v.name)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">The draft uses none yet.</p>
      )}
    </fieldset>
  );
}

/** What a model agent's replies may not say (README, Variables and guardrails): part of the draft spec. */
export function GuardrailsEditor({ spec, set }: { spec: Spec | undefined; set(key: string, value: unknown): void }) {
  const rails = (spec?.guardrails ?? {}) as GuardrailsDraft;
  const [topics, setTopics] = useState((rails.topics?.allowed ?? []).join('\n'));
  const [terms, setTerms] = useState((rails.blocked_terms ?? []).join('\n'));
  const [custom, setCustom] = useState(criteriaAsLines(rails.custom));
  const readCustom = customCriteriaOf(custom);
  const setRails = (next: GuardrailsDraft) => {
    const kept = Object.fromEntries(Object.entries({ ...rails, ...next }).filter(([, v]) => v !== undefined));
    set('guardrails', Object.keys(kept).length ? kept : undefined);
  };
  const disabled = !spec;
  const model = (spec?.responder as { type?: string } | undefined)?.type === 'model';
  return (
    <fieldset class="guardrails">
      <legend>Guardrails</legend>
      <p class="muted">
        Each sentence a model writes is checked before the visitor sees or hears it: blocked terms and a repeat of the
        agent's instructions at once, the topics and your criteria by the evaluation model within 300 ms (a sentence not
        judged in time goes out, flagged). A stopped reply is replaced by the refusal, written again once, or handed to
        a person; each decision is on the conversation's timeline and in Analytics.
        {!model && ' They act on a model’s replies: this agent answers through its hook or its documents.'}
      </p>
      <div class="grid">
        <label>
          Topics it talks about, one a line (empty: any)
          <textarea
            rows={3}
            disabled={disabled}
            placeholder={'rooms and rates\nbreakfast and the restaurant\nthe spa and the area'}
            value={topics}
            onInput={(e) => {
              setTopics(e.currentTarget.value);
              const allowed = linesOf(e.currentTarget.value);
              setRails({ topics: allowed ? { allowed } : undefined });
            }}
          />
        </label>
        <label>
          Blocked terms, one a line (whole words, any case)
          <textarea
            rows={3}
            disabled={disabled}
            placeholder={'Grand Hotel\ndiscount code'}
            value={terms}
            onInput={(e) => {
              setTerms(e.currentTarget.value);
              setRails({ blocked_terms: linesOf(e.currentTarget.value) });
            }}
          />
        </label>
      </div>
      <label>
        Custom criteria, one a line: refuse, retry or hand_off, then what a sentence must not do
        <textarea
          rows={2}
          class="mono"
          disabled={disabled}
          placeholder={'retry: promises a discount or a price not on the rates page\nhand_off: gives medical advice'}
          value={custom}
          onInput={(e) => {
            setCustom(e.currentTarget.value);
            const read = customCriteriaOf(e.currentTarget.value);
            if ('list' in read) setRails({ custom: read.list.length ? read.list : undefined });
          }}
        />
      </label>
      {'problem' in readCustom && <p class="warn">{readCustom.problem}</p>}
      <div class="grid">
        <label>
          Said instead of a stopped reply (empty: the widget language's own words)
          <input
            value={rails.refuse_text ?? ''}
            maxLength={300}
            disabled={disabled}
            placeholder="I'm sorry, I can't help with that here."
            onInput={(e) => setRails({ refuse_text: e.currentTarget.value.trim() || undefined })}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={rails.injection !== false}
            disabled={disabled}
            onChange={(e) => setRails({ injection: e.currentTarget.checked ? undefined : false })}
          />{' '}
          Stop a sentence that repeats the agent's instructions
        </label>
      </div>
    </fieldset>
  );
}
