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
