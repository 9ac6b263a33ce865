import { describe, expect, it } from 'vitest';
import { askedFor, contentWords, followsUp, languageOf, subjectWords, wordsIn } from './knowledge-words.js';

describe("a visitor's question, as the knowledge responder reads it", () => {
  it('leans on the question before only when it cannot stand alone: no words of its own, a word pointing back, or "and …?"', () => {
    for (const question of [
      'How much is it?',
      'Until when?',
      'And on weekends?',
      'When does it open?',
      'How do I get there?',
      'Can they go into the spa?',
      'What about dogs?',
      'Wie viel kostet das?',
      'Et le week-end ?',
      '¿Y eso cuánto cuesta?',
    ])
      expect(followsUp(question), question).toBe(true);
    for (const question of [
      'When is breakfast?',
      'Where can I park my car?',
      'Is there a spa?',
      'Are there towels at the pool?',
      'Wann gibt es Frühstück?',
      'Où puis-je garer ma voiture ?',
      'Does my van fit in the garage?',
    ])
      expect(followsUp(question), question).toBe(false);
  });

  it('tells the words that name a subject from those asking for a price, a time or a place', () => {
    expect(contentWords('How much does parking cost?')).toEqual(['parking', 'cost']);
    expect(subjectWords('How much does parking cost?')).toEqual(['parking']);
    expect(subjectWords('When does the pool open?')).toEqual(['pool']);
    expect(askedFor('How much is it?')).toContain('euros');
    expect(askedFor('Until when?')).toContain('pm');
    expect(askedFor('Wo kann ich parken?')).toContain('eingang');
    // Words that end in a letter past ASCII are whole words too.
    expect(askedFor('Où est le parking ?')).toContain('entrée');
    expect(askedFor('Il coûte combien ?')).toContain('euros');
    expect(askedFor('Is there a sauna?')).toEqual([]);
    // A word of another language's list that means something in English is kept.
    expect(contentWords('Does my van fit?')).toEqual(['van', 'fit']);
  });

  it('finds a word however a document hyphenates it, and by its stem', () => {
    expect(wordsIn('Wi-Fi is free on the terrace.', ['wifi', 'terraces'])).toEqual(['wifi', 'terraces']);
    expect(wordsIn('Check-in from 3 pm.', ['checkin'])).toEqual(['checkin']);
  });

  it('tells the language of a passage by its function words, or says it cannot', () => {
    expect(languageOf('The garage under the hotel has forty spaces, and a night costs 18 euros.')).toBe('en');
    expect(languageOf('Die Garage unter dem Hotel hat vierzig Plätze, und eine Nacht kostet 18 Euro.')).toBe('de');
    expect(languageOf("Le garage sous l'hôtel a quarante places, et une nuit coûte 18 euros.")).toBe('fr');
    expect(languageOf('El garaje bajo el hotel tiene cuarenta plazas y una noche cuesta 18 euros.')).toBe('es');
    expect(languageOf('Sauna.')).toBeUndefined();
  });
});
