import { lookUp, renderTemplate, valueText } from '#protocol/templates';
import type { AgentInfo } from '#protocol/frames';
import { fromJsonColumn } from '../../shared/json-column.js';
import type { ConversationRow } from './conversation.repository.js';

/** Where a conversation's variables come from (README, Variables and guardrails). */
export interface VariableSources {
  conversation: Pick<ConversationRow, 'id' | 'user_name' | 'user_ctx' | 'page_context'>;
  language: string;
  /** The page of the turn; none before the first (a greeting). */
  page?: { url: string | null; title: string | null } | undefined;
  now: Date;
}

/** A variable's value by name, undefined when it has none. */
export type VariableValues = (name: string) => string | undefined;

/** The conversation's variables: the token's `ctx` and the page's context read once, each value looked up when asked. */
export function conversationValues({ conversation, language, page, now }: VariableSources): VariableValues {
  const ctx = fromJsonColumn<unknown>(conversation.user_ctx);
  const context = fromJsonColumn<unknown>(conversation.page_context);
  const own: Record<string, string | null | undefined> = {
    'visitor.name': conversation.user_name,
    'page.url': page?.url,
    'page.title': page?.title,
    'conversation.id': conversation.id,
    'conversation.language': language,
    now: now.toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  };
  return (name) => {
    if (name.startsWith('ctx.')) return valueText(lookUp(ctx, name.slice(4)));
    if (name.startsWith('page.context.')) return valueText(lookUp(context, name.slice(13)));
    return own[name] ?? undefined;
  };
}

/** In a prompt a value is a quoted JSON string: it cannot end the sentence it stands in, nor start an instruction of its own. */
export const inPrompt = (values: VariableValues) => (text: string) => renderTemplate(text, values, JSON.stringify);

/** In a URL a value is percent-encoded: it stays one path segment or query value. */
export const inUrl = (values: VariableValues) => (text: string) => renderTemplate(text, values, encodeURIComponent);

/** In words shown and spoken (a greeting) a value is text on one line: the widget never reads it as markup. */
export const inWords = (values: VariableValues) => (text: string) =>
  renderTemplate(text, values, (value) => value.replace(/\s+/g, ' ').trim());

/** Each string inside a JSON value with its variables filled in as plain text: the body's JSON makes each a string. */
export function inBody(value: unknown, values: VariableValues): unknown {
  if (typeof value === 'string') return renderTemplate(value, values);
  if (Array.isArray(value)) return value.map((item) => inBody(item, values));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inBody(item, values)]));
  return value;
}

/** The agent as a conversation's widget is told it: its greeting with the conversation's variables filled in. */
export function withGreetingFilled(agent: AgentInfo, values: VariableValues): AgentInfo {
  const fill = inWords(values);
  return {
    ...agent,
    greeting: agent.greeting === null ? null : fill(agent.greeting),
    ...(agent.greetings
      ? { greetings: Object.fromEntries(Object.entries(agent.greetings).map(([tag, text]) => [tag, fill(text)])) }
      : {}),
  };
}
