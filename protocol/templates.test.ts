import { describe, expect, it } from 'vitest';
import { isKnownVariable, renderTemplate, specVariables, variablesIn, VALUE_CHARS } from './templates.js';

const values: Record<string, string> = {
  'visitor.name': 'Ada',
  'ctx.room': '12/../admin?x=1&y',
  now: '2026-11-29 10:00 UTC',
};
const valueOf = (name: string) => values[name];

describe('templates (README, Variables and guardrails)', () => {
  it('fills {{name}} and {{ name | default }}, a default where there is no value, nothing where neither', () => {
    expect(renderTemplate('Hello {{visitor.name}}!', valueOf)).toBe('Hello Ada!');
    expect(renderTemplate('Hello {{ visitor.name | there }}!', valueOf)).toBe('Hello Ada!');
    expect(renderTemplate('Hello {{ctx.guest|there}}!', valueOf)).toBe('Hello there!');
    expect(renderTemplate('Hello {{ctx.guest}}!', valueOf)).toBe('Hello !');
    expect(renderTemplate('Room {{ctx.room}}', valueOf, encodeURIComponent)).toBe('Room 12%2F..%2Fadmin%3Fx%3D1%26y');
    expect(renderTemplate('Note: {{visitor.name}}', valueOf, JSON.stringify)).toBe('Note: "Ada"');
    expect(renderTemplate('no variables', valueOf)).toBe('no variables');
  });

  it('never reads a value as a template, and cuts a value to its length', () => {
    const sneaky = (name: string) => (name === 'ctx.a' ? '{{ctx.b}}' : name === 'ctx.b' ? 'secret' : undefined);
    expect(renderTemplate('{{ctx.a}}', sneaky)).toBe('{{ctx.b}}');
    expect(renderTemplate('{{ctx.long}}', () => 'x'.repeat(5_000))).toHaveLength(VALUE_CHARS);
  });

  it('lists the variables of a text and what in double braces is not one', () => {
    expect(variablesIn('Hi {{visitor.name|you}}, {{ ctx.room }} {{visitor name}} {{}}')).toEqual({
      variables: [
        { name: 'visitor.name', fallback: 'you', written: '{{visitor.name|you}}' },
        { name: 'ctx.room', fallback: undefined, written: '{{ ctx.room }}' },
      ],
      malformed: ['{{visitor name}}', '{{}}'],
    });
  });

  it("knows the service's own names, and any key of the token's ctx and the page's context", () => {
    for (const name of ['visitor.name', 'page.url', 'page.title', 'conversation.id', 'conversation.language', 'now'])
      expect(isKnownVariable(name)).toBe(true);
    expect(isKnownVariable('ctx.booking.id')).toBe(true);
    expect(isKnownVariable('page.context.plan')).toBe(true);
    for (const name of ['visitor.email', 'ctx', 'page.context', 'conversation', 'secret'])
      expect(isKnownVariable(name)).toBe(false);
  });

  it("finds an agent's variables in its greeting, persona, instructions and tools' URLs and bodies, each once", () => {
    const spec = {
      greeting: { en: 'Hello {{visitor.name|there}}', de: 'Hallo {{visitor.name|}}' },
      persona: ['You help {{ctx.company}}.'],
      instructions: { booking: 'The booking is {{ctx.booking}}.' },
      responder: {
        type: 'model',
        tools: [{ url: 'https://x.example/b/{{ctx.booking}}', body: { plan: '{{page.context.plan}}', n: 1 } }],
      },
      voice: { name: '{{not.read}}' },
    };
    expect(specVariables(spec).map((v) => v.name)).toEqual([
      'visitor.name',
      'ctx.company',
      'ctx.booking',
      'page.context.plan',
    ]);
  });
});
