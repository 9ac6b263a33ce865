import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIDGET_LOCALES } from '#protocol/widget-locales';
import { languageName } from './language-name';
import { addEnglish, loadWords, localeFor, rightToLeft, t, wordsLocale } from './words';

type Entry = string | Record<string, string>;
const catalogue = (locale: string): Record<string, Entry> =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'locales', `${locale}.json`), 'utf8'));
const en = catalogue('en');
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the widget's catalogue", () => {
  it.each(WIDGET_LOCALES)('%s has every string English has, and no other', (locale) => {
    expect(Object.keys(catalogue(locale)).sort()).toEqual(Object.keys(en).sort());
  });

  it.each(WIDGET_LOCALES)(
    "%s's strings are not empty, keep English's placeholders, and a plural string has each of the locale's plural forms",
    (locale) => {
      const categories = new Intl.PluralRules(locale).resolvedOptions().pluralCategories;
      for (const [key, entry] of Object.entries(catalogue(locale))) {
        const english = en[key]!;
        if (typeof english === 'string') {
          expect(typeof entry, key).toBe('string');
          expect((entry as string).trim(), key).not.toBe('');
          expect(placeholders(entry as string), key).toEqual(placeholders(english));
          continue;
        }
        expect(Object.keys(entry).sort(), key).toEqual([...categories].sort());
        for (const [category, text] of Object.entries(entry)) {
          // A form for exactly one or two may say the number in words ("رسالتان", "שתי הודעות") instead of {count}.
          const allowed = ['one', 'two', 'zero'].includes(category) ? [[], ['count']] : [['count']];
          expect(allowed, `${key}.${category}`).toContainEqual(placeholders(text));
        }
      }
    },
  );
});

describe("choosing the widget's words", () => {
  it('matches by language, then script, skipping what the widget does not have', () => {
    expect(localeFor(['de-DE'])).toBe('de');
    expect(localeFor(['pt-BR'])).toBe('pt');
    expect(localeFor(['zh-CN'])).toBe('zh-Hans');
    expect(localeFor(['zh-TW', 'fr-CA'])).toBe('fr');
    expect(localeFor([undefined, null, 'not a tag', 'sw', 'he-IL'])).toBe('he');
    expect(localeFor(['sw'])).toBe('en');
    expect(localeFor([])).toBe('en');
  });
});

describe('the words shown', () => {
  let server: Server;
  let base: string;
  // The service's catalogue of German, missing one string; Russian as it is; no French at all.
  const served: Record<string, string> = {
    '/widget/locales/de.json': JSON.stringify({ ...catalogue('de'), send: undefined }),
    '/widget/locales/ru.json': JSON.stringify(catalogue('ru')),
  };
  const asked: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      asked.push(req.url!);
      const body = served[req.url!.split('?')[0]!];
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(body ?? '{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("are the launcher's alone on every page, and all of English once the panel brings it", () => {
    expect([t('open', { title: 'Harbor Hotel' }), t('close_named', { title: 'Harbor Hotel' })]).toEqual([
      'Chat with Harbor Hotel',
      'Close Harbor Hotel',
    ]);
    addEnglish(en);
    expect(t('close')).toBe('Close');
  });

  it("are the locale's once fetched, English for a string it lacks, never a key", async () => {
    await loadWords('de', base);
    expect([wordsLocale(), t('close'), t('open', { title: 'Harbor Hotel' }), t('send')]).toEqual([
      'de',
      'Schließen',
      'Mit Harbor Hotel chatten',
      'Send',
    ]);
    expect(asked.at(-1)).toMatch(/^\/widget\/locales\/de\.json\?v=[0-9a-f]{12}$/);
  });

  it("pick the plural form by the locale's rules", async () => {
    await loadWords('ru', base);
    expect([1, 3, 5, 21].map((count) => t('queued', { count }))).toEqual([
      'Нет сети. 1 сообщение будет отправлено, когда связь восстановится.',
      'Нет сети. 3 сообщения будут отправлены, когда связь восстановится.',
      'Нет сети. 5 сообщений будут отправлены, когда связь восстановится.',
      'Нет сети. 21 сообщение будет отправлено, когда связь восстановится.',
    ]);
    await loadWords('en', base);
    expect([1, 2].map((count) => t('queued', { count }))).toEqual([
      'Offline. 1 message will be sent when the connection is back.',
      'Offline. 2 messages will be sent when the connection is back.',
    ]);
  });

  it('are English when a catalogue cannot be fetched, and the last of overlapping loads wins', async () => {
    await loadWords('fr', base);
    expect([wordsLocale(), t('close')]).toEqual(['en', 'Close']);
    await Promise.all([loadWords('de', base), loadWords('ru', base)]);
    expect([wordsLocale(), t('close'), rightToLeft()]).toEqual(['ru', 'Закрыть', false]);
  });
});

describe("the language menu's names", () => {
  it('names each language in itself, with its region only when another of the menu shares its language', () => {
    const menu = ['en-US', 'de-DE', 'fr-FR', 'es-ES', 'ar-SA', 'he-IL'];
    expect(menu.map((tag) => languageName(tag, menu))).toEqual([
      'English',
      'Deutsch',
      'Français',
      'Español',
      'العربية',
      'עברית',
    ]);
    const both = ['en-US', 'en-GB', 'pt-BR'];
    expect(both.map((tag) => languageName(tag, both))).toEqual(['American English', 'British English', 'Português']);
  });
});
