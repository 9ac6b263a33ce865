import { useState } from 'preact/hooks';
import { get, put, path, query } from '../api';
import type { InLanguages } from '#protocol/in-language';
import { inLanguagesLines, inLanguagesOf } from '../spec-fields';
import type { Analytics, Deployment } from '../types';
import { ActionForm, ErrorNote, InLanguagesField, useAction, useLoad } from '../ui';

/** A rule as the form edits it: every field text, as typed. */
interface RuleDraft {
  id: string;
  path: string;
  seconds: string;
  scroll: string;
  exit: boolean;
  event: string;
  teaser: string;
  open: boolean;
  oncePer: 'visitor' | 'session';
  perDay: string;
}

type Rule = Record<string, unknown> & { id: string; when: Record<string, unknown>; teaser: unknown };

const draftOf = (rule: Rule): RuleDraft => ({
  id: rule.id,
  path: String(rule.when.path ?? ''),
  seconds: rule.when.seconds_on_page === undefined ? '' : String(rule.when.seconds_on_page),
  scroll: rule.when.scroll_percent === undefined ? '' : String(rule.when.scroll_percent),
  exit: rule.when.exit_intent === true,
  event: String(rule.when.event ?? ''),
  teaser: inLanguagesLines(rule.teaser as InLanguages),
  open: rule.open === true,
  oncePer: rule.once_per === 'session' ? 'session' : 'visitor',
  perDay: rule.max_per_day === undefined ? '' : String(rule.max_per_day),
});

const number = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The rule the API takes: what the form left empty is left out, so the service's defaults apply. */
const ruleOf = (d: RuleDraft) => {
  const teaser = inLanguagesOf(d.teaser);
  if ('problem' in teaser) throw new Error(`${d.id || 'A new rule'}'s teaser: ${teaser.problem}`);
  return {
    id: d.id.trim(),
    when: {
      path: d.path.trim() || undefined,
      seconds_on_page: number(d.seconds),
      scroll_percent: number(d.scroll),
      exit_intent: d.exit || undefined,
      event: d.event.trim() || undefined,
    },
    teaser: teaser.value,
    open: d.open || undefined,
    once_per: d.oncePer === 'session' ? 'session' : undefined,
    max_per_day: number(d.perDay),
  };
};

const blank = (n: number): RuleDraft => ({
  id: `greeting-${n}`,
  path: '/',
  seconds: '20',
  scroll: '',
  exit: false,
  event: '',
  teaser: '',
  open: false,
  oncePer: 'visitor',
  perDay: '',
});

const DAY_MS = 86_400_000;

/** Each rule's figures over the last 30 days (README, Greeting visitors first). */
function useFigures(deploymentId: string) {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const range = {
    from: new Date(today - 29 * DAY_MS).toISOString().slice(0, 10),
    to: new Date(today + DAY_MS).toISOString().slice(0, 10),
    deployment_id: deploymentId,
  };
  return useLoad(() => get<Analytics>(path`/api/v1/analytics${query(range)}`), [deploymentId]);
}

/**
 * Greeting visitors first (README, Greeting visitors first): the deployment's rules, each with what
 * must hold on the page, its teaser in the visitor's words, how often it may approach a visitor,
 * and how it did over the last 30 days; its teaser previewed on the Try it page.
 */
export function GreetingRules({ dep, onSaved }: { dep: Deployment; onSaved(d: Deployment): void }) {
  const engagement = dep.engagement_rules as Record<string, unknown>;
  const [drafts, setDrafts] = useState<RuleDraft[]>(((engagement.proactive ?? []) as Rule[]).map(draftOf));
  const figures = useFigures(dep.id);
  const [saved, setSaved] = useState<number>();
  const change = (i: number, patch: Partial<RuleDraft>) =>
    setDrafts(drafts.map((d, j) => (j === i ? { ...d, ...patch } : d)));
  const save = useAction(async () => {
    const { data } = await put<Deployment>(path`/api/v1/deployments/${dep.id}`, {
      engagement_rules: { ...engagement, proactive: drafts.map(ruleOf) },
    });
    onSaved(data);
    setSaved(drafts.length);
    figures.reload();
  });
  const figuresOf = (id: string) => figures.data?.totals.proactive.find((f) => f.rule_id === id);
  return (
    <ActionForm onRun={() => void save.start()}>
      <h2>Greeting visitors first</h2>
      <p class="muted">
        The widget greets a visitor when all of a rule's conditions hold on their page: a teaser beside the launcher
        (never a sound before they click), or the panel opened. A visitor who closes the widget or a teaser is not
        approached again in that visit. Up to 20 rules; the first that holds is shown.
      </p>
      {drafts.length === 0 && <p>No greeting yet: the widget waits for the visitor.</p>}
      {drafts.map((d, i) => {
        const f = figuresOf(d.id);
        return (
          <fieldset key={i} class="rule">
            <legend>{d.id || 'New rule'}</legend>
            <div class="grid">
              <label>
                Name (a-z, 0-9, - and _)
                <input value={d.id} required onInput={(e) => change(i, { id: e.currentTarget.value })} />
              </label>
              <label>
                On pages matching (* within a segment, ** across: /rooms/**)
                <input value={d.path} onInput={(e) => change(i, { path: e.currentTarget.value })} />
              </label>
              <label>
                After this many seconds on the page (visible)
                <input
                  type="number"
                  min={0}
                  max={3600}
                  value={d.seconds}
                  onInput={(e) => change(i, { seconds: e.currentTarget.value })}
                />
              </label>
              <label>
                After scrolling this far, %
                <input
                  type="number"
                  min={1}
                  max={100}
                  value={d.scroll}
                  onInput={(e) => change(i, { scroll: e.currentTarget.value })}
                />
              </label>
              <label>
                When the page calls Concierge.trigger with
                <input
                  value={d.event}
                  placeholder="booking_form_error"
                  onInput={(e) => change(i, { event: e.currentTarget.value })}
                />
              </label>
              <label>
                How often
                <select
                  value={d.oncePer}
                  onChange={(e) => change(i, { oncePer: e.currentTarget.value as RuleDraft['oncePer'] })}
                >
                  <option value="visitor">Once per visitor</option>
                  <option value="session">Once per visit</option>
                </select>
              </label>
              <label>
                At most, times a day (empty: no limit)
                <input
                  type="number"
                  min={1}
                  max={100}
                  value={d.perDay}
                  onInput={(e) => change(i, { perDay: e.currentTarget.value })}
                />
              </label>
            </div>
            <label class="check">
              <input type="checkbox" checked={d.exit} onChange={(e) => change(i, { exit: e.currentTarget.checked })} />
              When the pointer leaves the window towards the tabs (desktop browsers)
            </label>
            <label class="check">
              <input type="checkbox" checked={d.open} onChange={(e) => change(i, { open: e.currentTarget.checked })} />
              Open the panel instead of showing the teaser
            </label>
            <InLanguagesField label="Teaser" required value={d.teaser} onInput={(teaser) => change(i, { teaser })} />
            <div class="rule-foot">
              <p class="muted">
                {f
                  ? `Last 30 days: shown ${f.shown}, opened ${f.opened}${f.shown ? ` (${Math.round((f.opened / f.shown) * 100)}%)` : ''}, ${f.conversations} conversation${f.conversations === 1 ? '' : 's'} started, ${f.turns} turn${f.turns === 1 ? '' : 's'}.`
                  : 'Not shown in the last 30 days.'}
              </p>
              <a href={`#/try/${dep.id}`}>Preview its teaser in Try it</a>
              <button type="button" class="small" onClick={() => setDrafts(drafts.filter((_, j) => j !== i))}>
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
      <ErrorNote error={save.error ?? figures.error} />
      {saved !== undefined && !save.error && (
        <p role="status">
          Saved: {saved === 0 ? 'no greeting' : `${saved} greeting${saved === 1 ? '' : 's'}`}, on the widget from each
          visitor's next page.
        </p>
      )}
      <div class="actions">
        <button
          type="button"
          disabled={drafts.length >= 20}
          onClick={() => setDrafts([...drafts, blank(drafts.length + 1)])}
        >
          Add a greeting
        </button>
        <button type="submit" class="primary" disabled={save.busy}>
          Save greetings
        </button>
      </div>
    </ActionForm>
  );
}
