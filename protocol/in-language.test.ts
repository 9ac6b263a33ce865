import { describe, expect, it } from 'vitest';
import { inLanguage } from './in-language.js';

describe('words given per language', () => {
  const teaser = { en: 'Questions?', de: 'Fragen?', 'pt-BR': 'Dúvidas?' };
  it("follow the visitor's languages by tag, then by language, then English, then the first", () => {
    expect(inLanguage('Hi', ['de-DE'])).toBe('Hi');
    expect(inLanguage(teaser, ['de-AT', 'en'])).toBe('Fragen?');
    expect(inLanguage(teaser, ['pt-PT'])).toBe('Dúvidas?');
    expect(inLanguage(teaser, [undefined, 'fr-FR'])).toBe('Questions?');
    expect(inLanguage({ fr: 'Des questions ?', de: 'Fragen?' }, ['ja'])).toBe('Des questions ?');
  });
});
