import { z } from 'zod';

/** Text of `min..max` characters, counted as Unicode code points (an emoji is one, as a reader counts it). */
export const codePoints = (min: number, max: number) =>
  z.string().refine((text) => {
    const length = [...text].length;
    return length >= min && length <= max;
  }, `must be ${min} to ${max} characters`);

/** A BCP 47 language tag (`de-DE`, `zh-Hans`), as `Intl` reads it, in its canonical case. */
export const languageTag = z
  .string()
  .max(35)
  .transform((tag, ctx) => {
    try {
      return Intl.getCanonicalLocales(tag)[0]!;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a BCP 47 language tag such as de-DE' });
      return z.NEVER;
    }
  })
  .meta({ description: 'A BCP 47 language tag such as `de-DE`' });

function isLanguageTag(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/** Words once for all, or once per language tag (protocol/in-language.ts picks a visitor's). */
export const inLanguages = (text: z.ZodType<string>) =>
  z.union([
    text,
    z
      .record(z.string().max(35), text)
      .refine((byLanguage) => Object.keys(byLanguage).length > 0, 'must hold at least one language')
      .refine(
        (byLanguage) => Object.keys(byLanguage).every(isLanguageTag),
        'keys must be language tags such as de or de-DE',
      ),
  ]);
