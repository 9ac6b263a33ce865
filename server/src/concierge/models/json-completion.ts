import { type EgressPolicy, exchange } from '../../shared/egress.js';
import type { ChatMessage } from './chat-completions.js';
import { validatorOf } from './tool-calls.js';

/** A model that answers in JSON: where it is, its key (never recorded nor logged) and its name. */
export interface JsonModel {
  baseUrl: string;
  key: string | undefined;
  model: string;
}

/** What is asked: the messages, and the JSON Schema the answer must match (named, as `response_format` names it). */
export interface JsonQuestion {
  name: string;
  schema: Record<string, unknown>;
  messages: ChatMessage[];
  timeoutMs: number;
}

export type JsonAnswer<T> = { ok: true; value: T; ms: number } | { ok: false; why: string };

/**
 * Asks a model for one JSON answer (README, Tests and analysis): not streamed, `response_format`
 * naming the schema for endpoints that take one (OpenAI's structured outputs), the schema also told
 * in words for those that do not, and the answer checked against it either way. An answer that is
 * not JSON, or not of the schema, is asked once more with what was wrong; never rejects.
 */
export async function askForJson<T>(
  model: JsonModel,
  question: JsonQuestion,
  egress: EgressPolicy,
  signal?: AbortSignal,
): Promise<JsonAnswer<T>> {
  const started = performance.now();
  const validate = validatorOf(question.schema);
  if (validate instanceof Error)
    return { ok: false, why: `the answer's schema cannot be checked: ${validate.message}` };
  const messages: ChatMessage[] = [
    ...question.messages,
    {
      role: 'system',
      content: `Answer with one JSON object only, matching this JSON Schema:\n${JSON.stringify(question.schema)}`,
    },
  ];
  let why = '';
  for (let attempt = 0; attempt < 2; attempt++) {
    const said = await complete(model, question, messages, egress, signal);
    if (!said.ok) return said;
    let value: unknown;
    try {
      value = JSON.parse(stripFence(said.text));
    } catch {
      why = 'the model did not answer in JSON';
      messages.push({ role: 'assistant', content: said.text }, { role: 'user', content: `${why}: answer again.` });
      continue;
    }
    if (validate(value)) return { ok: true, value: value as T, ms: Math.round(performance.now() - started) };
    const errors = (validate.errors ?? []).map((e) => `data${e.instancePath} ${e.message}`).join(', ');
    why = `the model's answer does not match the schema: ${errors}`;
    messages.push({ role: 'assistant', content: said.text }, { role: 'user', content: `${why}. Answer again.` });
  }
  return { ok: false, why };
}

/** A model's answer may come in a Markdown code fence: the JSON is inside it. */
const stripFence = (text: string) => text.replace(/^\s*```(?:json)?\s*/i, '').replace(/\s*```\s*$/, '');

async function complete(
  model: JsonModel,
  question: JsonQuestion,
  messages: ChatMessage[],
  egress: EgressPolicy,
  signal: AbortSignal | undefined,
): Promise<{ ok: true; text: string } | { ok: false; why: string }> {
  const body = JSON.stringify({
    model: model.model,
    messages,
    temperature: 0,
    response_format: {
      type: 'json_schema',
      json_schema: { name: question.name, schema: question.schema, strict: false },
    },
  });
  const sent = await exchange(
    `${model.baseUrl}/chat/completions`,
    body,
    { 'user-agent': 'concierge-models/1', ...(model.key ? { authorization: `Bearer ${model.key}` } : {}) },
    question.timeoutMs,
    egress,
    signal,
  );
  const res = sent.response;
  if (!res) return { ok: false, why: `the model endpoint gave no answer: ${sent.error?.message ?? 'no answer'}` };
  if (res.status < 200 || res.status > 299) return { ok: false, why: `the model endpoint answered HTTP ${res.status}` };
  let text: unknown;
  try {
    text = (JSON.parse(res.body) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    return { ok: false, why: 'the model endpoint answered what is not a chat completion' };
  }
  return typeof text === 'string' ? { ok: true, text } : { ok: false, why: 'the model answered no text' };
}
