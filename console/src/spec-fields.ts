import type { InLanguages } from '#protocol/in-language';
import { ACTION_NAME, ACTION_NAME_RULE, isBuiltInTool, TOOL_NAME, TOOL_NAME_RULE } from '#protocol/tools';
import { type GuardrailAction, guardrailActions } from '#protocol/guardrails';

// An agent's spec fields as the console's forms read and write them, and what is wrong with them in words.

/** An agent's pronunciations (README, The agent's own voice). */
export interface Pronunciation {
  term: string;
  say: string;
  language?: string;
}

/** Pronunciations as the agent page edits them: one a line, `term = say`, with `[de]` after for one language only. */
export function pronunciationsAsLines(list: unknown): string {
  if (!Array.isArray(list)) return '';
  return (list as Pronunciation[]).map((p) => `${p.term} = ${p.say}${p.language ? ` [${p.language}]` : ''}`).join('\n');
}

/** The lines read back, and each line that does not read as `term = say` or `term = say [language]`. */
export function pronunciationsOf(lines: string): { list: Pronunciation[]; problems: string[] } {
  const list: Pronunciation[] = [];
  const problems: string[] = [];
  for (const line of lines.split('\n').map((l) => l.trim())) {
    if (!line) continue;
    const parsed = /^(.+?)\s*=\s*(.+?)(?:\s*\[([A-Za-z]{2,3}(?:-[A-Za-z0-9]+)*)\])?$/.exec(line);
    if (!parsed) problems.push(`"${line}": write it as term = how to say it, with [de] after for German only`);
    else list.push({ term: parsed[1]!, say: parsed[2]!, ...(parsed[3] ? { language: parsed[3] } : {}) });
  }
  return { list, problems };
}

/**
 * An agent's tools as its page edits them, a JSON array (README, An agent without a server): the
 * list, and what is wrong with each in words, before a publish would refuse it. `page`: tools the
 * visitor's page runs (client actions), which have no url and a client action's name.
 */
export function toolsOf(text: string, where: 'server' | 'page'): { list: unknown[]; problems: string[] } {
  if (!text.trim()) return { list: [], problems: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { list: [], problems: [`Not valid JSON: ${(err as Error).message}`] };
  }
  if (!Array.isArray(value)) return { list: [], problems: ['Must be a JSON array of tools: [{"name": …}]'] };
  const problems = value.flatMap((tool: unknown, i) => {
    const t = (tool ?? {}) as Record<string, unknown>;
    const label = `Tool ${i + 1}${typeof t.name === 'string' ? ` (${t.name})` : ''}`;
    const wrong: string[] = [];
    if (typeof t.name !== 'string' || !(where === 'page' ? ACTION_NAME : TOOL_NAME).test(t.name))
      wrong.push(`name ${where === 'page' ? ACTION_NAME_RULE : TOOL_NAME_RULE}`);
    if (typeof t.name === 'string' && isBuiltInTool(t.name)) wrong.push('name is a built-in tool');
    if (typeof t.description !== 'string' || !t.description.trim()) wrong.push('description is required');
    const parameters = t.parameters as Record<string, unknown> | undefined;
    if (!parameters || typeof parameters !== 'object' || parameters.type !== 'object')
      wrong.push('parameters must be a JSON Schema with "type": "object"');
    else if (/"(pattern|patternProperties)"\s*:/.test(JSON.stringify(parameters)))
      wrong.push('parameters may not use pattern or patternProperties');
    if (where === 'server' && (typeof t.url !== 'string' || !/^https?:\/\//.test(t.url)))
      wrong.push('url must be an http(s) URL of your server');
    return wrong.map((w) => `${label}: ${w}`);
  });
  return { list: value, problems };
}

/** A line with its language: `de: Fragen?` (a lower-case language first, so "FAQ:" is text). */
const TAGGED = /^([a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*)\s*:\s*(.+)$/;

/** Words in several languages as the console's form shows them: the text, or one `tag: text` line per language. */
export function inLanguagesLines(words: InLanguages): string {
  return typeof words === 'string'
    ? words
    : Object.entries(words)
        .map(([tag, text]) => `${tag}: ${text}`)
        .join('\n');
}

/**
 * What the form's text says (README, The widget in your visitors' languages): one text per
 * language when every line starts with a language tag, one text for every visitor when none does.
 * A mix, or a language twice, could be read two ways and is refused, saying which lines.
 */
export function inLanguagesOf(text: string): { value: InLanguages } | { problem: string } {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const tagged = lines.map((l) => TAGGED.exec(l));
  if (!tagged.some(Boolean)) return { value: lines.join(' ') };
  const bare = tagged.findIndex((m) => !m);
  if (bare >= 0) {
    const other = tagged.findIndex(Boolean);
    return {
      problem: `Line ${bare + 1} has no language, but line ${other + 1} has (${tagged[other]![1]}:). Start every line with its language (en: …), or write one text for every visitor.`,
    };
  }
  const tags = tagged.map((m) => m![1]!);
  const twice = tags.findIndex((tag, i) => tags.indexOf(tag) !== i);
  if (twice >= 0)
    return {
      problem: `${tags[twice]}: is there twice (lines ${tags.indexOf(tags[twice]!) + 1} and ${twice + 1}); keep one.`,
    };
  return { value: Object.fromEntries(tagged.map((m) => [m![1]!, m![2]!.trim()])) };
}

/** A custom guardrail (README, Variables and guardrails): what a sentence must not do, and what is done when one does. */
export interface CustomCriterion {
  criterion: string;
  action: GuardrailAction;
}

/** Custom criteria as the agent page edits them: one a line, `action: criterion`. */
export const criteriaAsLines = (list: unknown): string =>
  Array.isArray(list) ? (list as CustomCriterion[]).map((c) => `${c.action}: ${c.criterion}`).join('\n') : '';

/** The lines read back, or the first line that does not read as `refuse|retry|hand_off: criterion`. */
export function customCriteriaOf(lines: string): { list: CustomCriterion[] } | { problem: string } {
  const list: CustomCriterion[] = [];
  for (const [i, line] of lines.split('\n').entries()) {
    if (!line.trim()) continue;
    const read = /^\s*([a-z_]+)\s*:\s*(.{3,})$/.exec(line);
    if (!read || !(guardrailActions as readonly string[]).includes(read[1]!))
      return {
        problem: `Line ${i + 1}: write it as refuse, retry or hand_off, a colon, then what a sentence must not do`,
      };
    list.push({ action: read[1] as GuardrailAction, criterion: read[2]!.trim() });
  }
  return { list };
}

/** A list edited one item a line: the items, none when empty. */
export const linesOf = (text: string): string[] | undefined => {
  const items = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
};

/** The values Try it plays a visitor with (README, Variables and guardrails), by variable name. */
export type Played = Record<string, string>;

/** `a.b` = v as `{a: {b: v}}`, for each name under `prefix`: the token's ctx, the page's context. */
export function nestedValues(played: Played, prefix: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(played)) {
    if (!name.startsWith(prefix) || !value.trim()) continue;
    const keys = name.slice(prefix.length).split('.');
    let at = out;
    for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
    at[keys.at(-1)!] = value;
  }
  return Object.keys(out).length ? out : undefined;
}
