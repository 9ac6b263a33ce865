import { describe, expect, it } from 'vitest';
import { answerFor } from './answers.js';

const SITE = 'http://localhost:8788';

describe("the demo hotel's answers", () => {
  it.each([
    ['en-US', 'Can I get a table for dinner?', 'A table for two at 7 pm, please.', 'Done: a table for two at 7 pm'],
    [
      'de-DE',
      'Kann ich einen Tisch reservieren?',
      'Einen Tisch für zwei um 19 Uhr, bitte.',
      'Erledigt: Ein Tisch für zwei um 19 Uhr',
    ],
    [
      'fr-FR',
      'Une table pour le dîner ?',
      'Une table pour deux à 19 h, s’il vous plaît.',
      'C’est fait : une table pour deux à 19 h',
    ],
    [
      'es-ES',
      '¿Tienen mesa para cenar?',
      'Una mesa para dos a las 19:00, por favor.',
      'Hecho: una mesa para dos a las 19:00',
    ],
  ])('completes a table booking from its own quick reply (%s)', (language, ask, quickReply, held) => {
    const offer = answerFor(ask, SITE, language);
    const first = offer.actions?.find((a) => a.type === 'quick_reply');
    expect(first).toMatchObject({ type: 'quick_reply', text: quickReply });
    const booked = answerFor(first!.type === 'quick_reply' ? first!.text : '', SITE, language);
    expect(booked.text.startsWith(held)).toBe(true);
    expect(booked.actions).toEqual([expect.objectContaining({ type: 'link', url: `${SITE}/book` })]);
    expect(booked.actions?.some((a) => a.type === 'quick_reply')).toBe(false);
  });

  it('answers German, French and Spanish questions, not only their greetings', () => {
    expect(answerFor('Wann gibt es Frühstück?', SITE, 'de-DE').text).toBe(
      'Das Frühstück gibt es von 7 bis 10:30 Uhr im Gartensaal, am Wochenende bis 11 Uhr.',
    );
    expect(answerFor('Où est le parking ?', SITE, 'fr-FR').text).toMatch(/^Le parking est dans le garage/);
    expect(answerFor('¿Cuál es la contraseña del wifi?', SITE, 'es-ES').text).toMatch(/^La red wifi se llama/);
    expect(answerFor('Hallo', SITE, 'de-DE').text).toBe('Hallo! Wie kann ich Ihnen bei Ihrem Aufenthalt helfen?');
    expect(answerFor('Zeigen Sie mir die Zimmer', SITE, 'de-DE').actions).toEqual([
      { type: 'client', name: 'show_rooms' },
    ]);
    expect(answerFor('Je voudrais parler à la réception', SITE, 'fr-FR')).toMatchObject({
      handoff: expect.any(String),
    });
    expect(answerFor('Quelle est la couleur du ciel ?', SITE, 'fr-FR').text).toMatch(/^Bonne question\. J’ai transmis/);
  });

  it('still answers in English by default', () => {
    expect(answerFor('When is breakfast?', SITE).text).toBe(
      'Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11.',
    );
    expect(answerFor('I want a person', SITE)).toMatchObject({ handoff: 'The guest asked for a person' });
  });

  it("answers what the booking form refused, in the guest's language, whatever they asked (README, Greeting visitors first)", () => {
    const page = { events: [{ name: 'booking_form_error', data: { guests: 12, reason: 'more than 8 guests' } }] };
    expect(answerFor('What happened?', SITE, 'en-US', page)).toEqual({
      text: 'I see the booking form would not take a table for 12: online bookings stop at eight guests. I have asked the restaurant to arrange it with you here; someone will join in a moment.',
      handoff: 'A table for 12: more than the form takes',
    });
    expect(answerFor('Was ist los?', SITE, 'de-DE', page).text).toMatch(
      /^Ich sehe, das Formular hat einen Tisch für 12/,
    );
    // Other events of the page change nothing.
    expect(answerFor('When is breakfast?', SITE, 'en-US', { events: [{ name: 'booking_requested' }] }).text).toMatch(
      /^Breakfast is served/,
    );
  });
});
