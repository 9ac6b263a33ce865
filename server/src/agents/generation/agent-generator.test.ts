import { describe, expect, it } from 'vitest';
import { templateGenerator } from './agent-generator.js';

const greetingOf = async (name: string) =>
  (
    await templateGenerator.generate(
      { name, description: null },
      { reportProgress: async () => {}, signal: new AbortController().signal },
    )
  ).greeting;

describe('the template generator', () => {
  it('introduces a role as "this is the …", in the case a sentence reads it, and a persona by name', async () => {
    expect(await greetingOf('Harbor Hotel concierge')).toBe(
      'Hello, this is the Harbor Hotel concierge. How can I help you today?',
    );
    expect(await greetingOf('Front desk')).toBe('Hello, this is the front desk. How can I help you today?');
    expect(await greetingOf('The night desk')).toBe('Hello, this is the night desk. How can I help you today?');
    expect(await greetingOf('IT helpdesk team')).toBe('Hello, this is the IT helpdesk team. How can I help you today?');
    expect(await greetingOf('Ava')).toBe("Hello, I'm Ava. How can I help you today?");
  });
});
