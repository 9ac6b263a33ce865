// Variables in what an agent says (README, Variables and guardrails): `{{name}}` and
// `{{name|default}}`, filled from the conversation. No code runs, no loops, no nesting: a name is
// looked up, its value written in the place's own encoding, and that is all a template can do.

/** The service's own variables; `ctx.KEY` (the user token's `ctx`) and `page.context.KEY` (the page's context) besides. */
export const SERVICE_VARIABLES = [
  'visitor.name',
  'page.url',
  'page.title',
  'conversation.id',
  'conversation.language',
  'now',
] as const;

/** Where a variable's value comes from, by its name's start. */
export const VARIABLE_SOURCES = ['ctx.', 'page.context.'] as const;

/** A value is written up to this many characters: a token's `ctx` cannot fill a prompt. */
export const VALUE_CHARS = 500;

/** One `{{…}}` in a text, as written. */
export interface TemplateVariable {
  name: string;
  /** What `|default` gives when the variable has no value; undefined when there is none. */
  fallback: string | undefined;
  /** The whole `{{…}}`, as written. */
  written: string;
}

const NAME = String.raw`[A-Za-z_][\w-]*(?:\.[\w-]+)*`;
/** `{{ name }}` or `{{ name | default }}`; a default holds no braces. */
const VARIABLE = new RegExp(String.raw`\{\{\s*(${NAME})\s*(?:\|([^{}]*))?\}\}`, 'g');
/** Anything in double braces: what is not a {@link VARIABLE} among them is malformed. */
const BRACES = /\{\{[^{}]*\}\}/g;

/** The variables a text uses, and each `{{…}}` that is not one (`{{visitor name}}`). */
export function variablesIn(text: string): { variables: TemplateVariable[]; malformed: string[] } {
  if (!text.includes('{{')) return { variables: [], malformed: [] };
  const variables = [...text.matchAll(VARIABLE)].map((m) => ({
    name: m[1]!,
    fallback: m[2] === undefined ? undefined : m[2].trim(),
    written: m[0],
  }));
  const malformed = [...text.matchAll(BRACES)].map((m) => m[0]).filter((b) => !variables.some((v) => v.written === b));
  return { variables, malformed };
}

/** Whether the service can fill `name`: one of its own, or a key of the token's `ctx` or the page's context. */
export function isKnownVariable(name: string): boolean {
  return (
    (SERVICE_VARIABLES as readonly string[]).includes(name) ||
    VARIABLE_SOURCES.some((source) => name.startsWith(source) && name.length > source.length)
  );
}

/**
 * `text` with each variable's value written by `encode` (percent-encoding in a URL, a quoted JSON
 * string in a prompt), its default where it has no value, else nothing. A value never becomes
 * part of the template: it is not read again for `{{`.
 */
export function renderTemplate(
  text: string,
  valueOf: (name: string) => string | undefined,
  encode: (value: string) => string = (value) => value,
): string {
  if (!text.includes('{{')) return text;
  return text.replace(VARIABLE, (_whole, name: string, fallback: string | undefined) => {
    const value = valueOf(name);
    if (value !== undefined && value !== '') return encode(value.slice(0, VALUE_CHARS));
    // A default is the customer's own words: written as they are.
    return fallback?.trim() ?? '';
  });
}

/** A value of the token's `ctx` or the page's context as text: a string as it is, anything else as JSON. */
export function valueText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `path` (`a.b`) looked up in an object: the value of a nested key, or undefined. */
export function lookUp(source: unknown, path: string): unknown {
  let at = source;
  for (const key of path.split('.')) {
    if (!at || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** One text of an agent's spec that may hold variables, and where it is. */
export interface TemplatedText {
  path: string;
  text: string;
  /** A tool's URL: its values are percent-encoded, and no variable may stand before its path. */
  url?: true;
}

/** Every string inside `value` (an object's, a list's), with its path from `path`. */
function* stringsOf(value: unknown, path: string): Generator<TemplatedText> {
  if (typeof value === 'string') yield { path, text: value };
  else if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* stringsOf(item, `${path}.${i}`);
  else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) yield* stringsOf(item, `${path}.${key}`);
}

/** The texts of an agent's spec where variables are filled in: its greeting, persona, instructions and tools' URLs and bodies. */
export function templatedTexts(spec: Record<string, unknown>): TemplatedText[] {
  const texts = [
    ...stringsOf(spec.greeting, 'greeting'),
    ...stringsOf(spec.persona, 'persona'),
    ...stringsOf(spec.instructions, 'instructions'),
  ];
  const tools = (spec.responder as { tools?: unknown } | undefined)?.tools;
  if (Array.isArray(tools))
    tools.forEach((tool: { url?: unknown; body?: unknown } | null, i) => {
      if (typeof tool?.url === 'string') texts.push({ path: `responder.tools.${i}.url`, text: tool.url, url: true });
      texts.push(...stringsOf(tool?.body, `responder.tools.${i}.body`));
    });
  return texts;
}

/** The variables an agent's spec uses, each once, in the order they first appear. */
export function specVariables(spec: Record<string, unknown>): TemplateVariable[] {
  const seen = new Map<string, TemplateVariable>();
  for (const { text } of templatedTexts(spec))
    for (const variable of variablesIn(text).variables) if (!seen.has(variable.name)) seen.set(variable.name, variable);
  return [...seen.values()];
}
