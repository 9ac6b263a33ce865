import type { InLanguages } from '#protocol/in-language';
import type { Delivery, Turn } from './types';

/** `#/agents/123` → `['agents', '123']`; empty for the home page. */
export function routeOf(hash: string): string[] {
  return hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
}

export interface Facts {
  agents: number;
  published: number;
  deployments: number;
  tests: number;
  active: number;
  conversations: number;
  /** Conversations with visitors: not started by Try it. */
  visitors: number;
}

export interface Step {
  id: string;
  title: string;
  done: boolean;
  href: string;
}

/** The getting-started checklist, ticked from what exists; the first step not done is the next one. */
export function checklist(f: Facts): Step[] {
  return [
    { id: 'agent', title: 'Create an agent', done: f.agents > 0, href: '#/agents' },
    { id: 'publish', title: 'Publish it', done: f.published > 0, href: '#/agents' },
    { id: 'deployment', title: 'Create a deployment', done: f.deployments > 0, href: '#/deployments' },
    { id: 'test', title: 'Send a test hook to your server', done: f.tests > 0, href: '#/deployments' },
    { id: 'install', title: 'Activate it and install the snippet', done: f.active > 0, href: '#/deployments' },
    { id: 'conversation', title: 'Have a first conversation', done: f.conversations > 0, href: '#/try' },
  ];
}

/**
 * Live: an active deployment that visitors (not Try it) have talked to. The console then opens on
 * the Inbox, the front desk's page, instead of the checklist (still under Getting started).
 */
export const isLive = (f: Facts): boolean => f.active > 0 && f.visitors > 0;

export interface DiffLine {
  kind: ' ' | '+' | '-';
  text: string;
}

/** A line diff (longest common subsequence): enough for two agent specs of a few hundred lines. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: ' ', text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ kind: '-', text: a[i++]! });
    else out.push({ kind: '+', text: b[j++]! });
  }
  while (i < a.length) out.push({ kind: '-', text: a[i++]! });
  while (j < b.length) out.push({ kind: '+', text: b[j++]! });
  return out;
}

export { serverSnippetOf } from '../../sdk/node/examples/server-snippet';

/** What a customer pastes into their page. */
export function snippetOf(baseUrl: string, deploymentId: string): string {
  return `<script src="${baseUrl}/widget/concierge.js" data-deployment-id="${deploymentId}" data-token-url="/your/token-endpoint" async></script>`;
}

const header = (d: Delivery, name: string): string =>
  Object.entries(d.request.headers).find(([k]) => k.toLowerCase() === name)?.[1] ?? '';

/** The exact string a Standard Webhooks signature covers: `{webhook-id}.{webhook-timestamp}.{body}`. */
export function signedStringOf(d: Delivery): string {
  return `${header(d, 'webhook-id')}.${header(d, 'webhook-timestamp')}.${d.request.body}`;
}

/** How to check this delivery's signature yourself, with the Node SDK and with openssl anywhere. */
export function verificationSnippets(d: Delivery): { node: string; openssl: string } {
  const id = header(d, 'webhook-id');
  const ts = header(d, 'webhook-timestamp');
  return {
    node: [
      `import { verifyHook } from 'concierge-server';`,
      `// rawBody: the request's exact bytes; headers: the request's headers. Throws HookVerificationError.`,
      `const call = verifyHook(rawBody, headers, process.env.SIGNING_SECRET);`,
    ].join('\n'),
    openssl: [
      `# The key is the base64 after whsec_; compare with webhook-signature (after "v1,")`,
      `printf '%s' '${id}.${ts}.'"$BODY" \\`,
      `  | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf '%s' "\${SIGNING_SECRET#whsec_}" | base64 -d | xxd -p -c 256) -binary | base64`,
    ].join('\n'),
  };
}

/** Problems with an allowed-origins list; an empty list is allowed but worth a warning. */
/** What is wrong with the widget's menu languages (README, The widget in your visitors' languages): tags that are not BCP 47, one named twice, more than 20. */
export function languageProblems(tags: string[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const tag of tags) {
    let canonical: string | undefined;
    try {
      canonical = Intl.getCanonicalLocales(tag)[0];
    } catch {
      problems.push(`${tag} is not a language tag such as de-DE or en-GB`);
      continue;
    }
    if (seen.has(canonical!)) problems.push(`${tag} is named twice`);
    seen.add(canonical!);
  }
  if (tags.length > 20) problems.push(`At most 20 languages (${tags.length} given)`);
  return problems;
}

/** A locale as its own speakers name it, with its tag: "Deutsch (de)". */
export const localeLabel = (locale: string): string =>
  `${new Intl.DisplayNames([locale], { type: 'language' }).of(locale)} (${locale})`;

export function originProblems(origins: string[]): string[] {
  if (!origins.length) return ['The list is empty: a page on any site can open sessions with this deployment.'];
  const problems: string[] = [];
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || parsed.origin !== origin)
      problems.push(`${origin} is not an origin (scheme://host[:port], no path or trailing slash)`);
  }
  return problems;
}

export interface TimelineItem {
  at: string;
  kind:
    | 'visitor'
    | 'knowledge'
    | 'attempt'
    | 'acknowledged'
    | 'part'
    | 'reply'
    | 'resolved'
    | 'heard'
    | 'feedback'
    | 'failed';
  title: string;
  delivery?: Delivery;
  ok?: boolean;
  /** A streamed reply's parts, folded under its one row. */
  parts?: { at: string; title: string }[];
}

/** What a reply offered beside its text, in words: `link "Book" (https://…), quick reply "7 pm", client action show_rooms`. */
export function actionsInWords(actions: Turn['reply_actions']): string {
  return actions
    .map((a) =>
      a.type === 'link'
        ? `link "${a.label}" (${a.url})`
        : a.type === 'quick_reply'
          ? `quick reply "${a.label}"`
          : `client action ${a.name}${a.label ? ` "${a.label}"` : ''}`,
    )
    .join(', ');
}

/** A model's or a tool's call in a turn's timeline: which, how it went, and its figures. */
export function modelCallTitle(d: Delivery): string {
  const answer = d.response ? `${d.response.status}` : (d.error ?? 'no answer');
  const why = d.error_detail ? `: ${d.error_detail}` : '';
  if (d.kind === 'tool') {
    const tool = (JSON.parse(d.request.body) as { tool?: string }).tool ?? 'tool';
    return `Tool ${tool}: ${answer} in ${d.duration_ms} ms${why}`;
  }
  const model = (JSON.parse(d.request.body) as { model?: string }).model ?? 'model';
  const usage = d.model_usage;
  const figures = [
    usage?.first_token_ms != null ? `first token in ${usage.first_token_ms} ms` : '',
    usage?.tokens_in != null ? `${usage.tokens_in} tokens in, ${usage.tokens_out ?? '?'} out` : '',
  ].filter(Boolean);
  return `Model ${model} (call ${d.attempt}): ${answer} in ${d.duration_ms} ms${figures.length ? `, ${figures.join(', ')}` : ''}${why}`;
}

export const partsInWords = (n: number): string => `${n} part${n === 1 ? '' : 's'}`;

/** One turn as it happened, in time order: the question, each hook attempt, the acknowledgement, the reply (its streamed parts folded under it). */
export function turnTimeline(turn: Turn): TimelineItem[] {
  const items: TimelineItem[] = [
    {
      at: turn.created_at,
      kind: 'visitor',
      title: `Visitor (${turn.mode}${turn.language ? `, ${turn.language}` : ''}): ${turn.text}`,
    },
  ];
  // Where they asked from (README, Greeting visitors first).
  if (turn.page)
    items.push({
      at: turn.created_at,
      kind: 'visitor',
      title: `On the page ${turn.page.title || turn.page.url} (${turn.page.url})`,
    });
  // The agent's knowledge base passages it was given (README, Answers from your documents).
  if (turn.knowledge)
    items.push({
      at: turn.created_at,
      kind: 'knowledge',
      title: turn.knowledge.length
        ? `Knowledge: ${turn.knowledge.map((k) => `${k.title} (${k.score})`).join(', ')}`
        : 'Knowledge: no passage matched',
    });
  for (const d of turn.hook_attempts) {
    const answer = d.response ? `${d.response.status}` : (d.error ?? 'no answer');
    // Why it failed, in the API's words (for egress_refused: the setting that would allow it).
    const refused = !d.error_detail
      ? ''
      : d.error === 'invalid_answer'
        ? `, refused: ${d.error_detail}`
        : `: ${d.error_detail}`;
    items.push({
      at: d.sent_at,
      kind: 'attempt',
      title: `Hook attempt ${d.attempt}: ${answer} in ${d.duration_ms} ms${refused}`,
      delivery: d,
      ok: d.outcome === 'succeeded',
    });
  }
  if (turn.acknowledged_at) items.push({ at: turn.acknowledged_at, kind: 'acknowledged', title: 'Acknowledged' });
  // A model agent's calls (README, An agent without a server): the model's and its tools'.
  for (const d of turn.model_calls)
    items.push({
      at: d.sent_at,
      kind: 'attempt',
      title: modelCallTitle(d),
      delivery: d,
      ok: d.outcome === 'succeeded',
    });
  const parts = turn.parts.map((p) => ({
    at: p.received_at,
    title: `Part ${p.part}${p.received_at === turn.first_part_at ? ' (first)' : ''}: ${p.text}`,
  }));
  const folded = parts.length ? { parts } : {};
  if (turn.reply_received) {
    const dup = turn.reply_received.duplicates;
    const from = turn.replied_by?.type === 'person' ? `Reply from ${turn.replied_by.name}` : 'Reply received';
    items.push({
      at: turn.reply_received.at,
      kind: 'reply',
      title: `${from}${dup ? ` (${dup} duplicate${dup > 1 ? 's' : ''} ignored)` : ''}: ${turn.reply_text ?? ''}`,
      ...folded,
    });
  } else if (parts.length) {
    // Still streaming: one row for the reply so far.
    items.push({ at: parts[0]!.at, kind: 'part', title: `Streaming: ${partsInWords(parts.length)} so far`, ...folded });
  }
  // What the visitor heard of the spoken reply (README, The agent's own voice).
  if (turn.heard)
    items.push({
      at: turn.heard.at,
      kind: 'heard',
      title: turn.heard.interrupted
        ? `Interrupted; the visitor heard: ${turn.heard.text ? `“${turn.heard.text}”` : 'nothing of it'}`
        : `Heard in full: “${turn.heard.text}”`,
    });
  if (turn.feedback)
    items.push({
      at: turn.feedback.at,
      kind: 'feedback',
      title: `Rated ${turn.feedback.rating === 'up' ? '👍 helpful' : '👎 not helpful'}${turn.feedback.comment ? `: “${turn.feedback.comment}”` : ''}`,
    });
  if (turn.status === 'failed' || turn.status === 'expired')
    items.push({
      at: turn.resolved_at ?? turn.created_at,
      kind: 'failed',
      title: `Turn ${turn.status}${turn.failure_reason ? `: ${turn.failure_reason}` : ''}`,
    });
  else if (turn.resolved_at)
    items.push({
      at: turn.resolved_at,
      kind: 'resolved',
      title: turn.reply_actions.length ? `Resolved, offering ${actionsInWords(turn.reply_actions)}` : 'Resolved',
    });
  return items.sort((x, y) => x.at.localeCompare(y.at));
}

/** 1234 → "1.2 s"; 87 → "87 ms". */
export const duration = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** A timestamp for people, in their time zone, to the second. */
export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '—';

/** A local day (`2026-11-24`, from a date input) as the instant it starts, `plusDays` later; empty stays empty. */
export function startOfDay(day: string, plusDays = 0): string {
  if (!day) return '';
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y!, m! - 1, d! + plusDays).toISOString();
}

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

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ACTION_NAME = /^[a-z0-9_.-]{1,64}$/;

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
      wrong.push(`name must be 1 to 64 of ${where === 'page' ? 'a-z, 0-9, _ . -' : 'a-z, A-Z, 0-9, _ and -'}`);
    if (['hand_off_to_person', 'end_conversation'].includes(t.name as string)) wrong.push('name is a built-in tool');
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
