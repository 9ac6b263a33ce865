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
  it('introduces a role with "the" and a persona by name', async () => {
    expect(await greetingOf('Harbor Hotel concierge')).toBe(
      "Hello, I'm the Harbor Hotel concierge. How can I help you today?",
    );
    expect(await greetingOf('Front desk')).toBe("Hello, I'm the Front desk. How can I help you today?");
    expect(await greetingOf('The night desk')).toBe("Hello, I'm The night desk. How can I help you today?");
    expect(await greetingOf('Ava')).toBe("Hello, I'm Ava. How can I help you today?");
  });
});
