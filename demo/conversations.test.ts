import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deployAgent, type Widget } from '../server/test/concierge-kit.js';
import { client, describeEachStore, startService, type StoreKind, type TestService } from '../server/test/harness.js';

/**
 * The demo hotel's concierge as its guests meet it (README, Answers from your documents): short
 * conversations over the guest guide, each turn with the section of the guide that answers it (or
 * none, for what the guide does not say). A follow-up ("how much is it?") is answered from the
 * section the turn before was about; a question that stands on its own is answered on its own
 * words, whatever came before.
 */
export const CONVERSATIONS: readonly (readonly [question: string, section: string | null])[][] = [
  [
    ['Where can I park?', 'parking'],
    ['When is breakfast?', 'breakfast'],
    ['Is there a spa?', 'spa'],
  ],
  [
    ['Where can I park my car?', 'parking'],
    ['How much is it?', 'parking'],
  ],
  [
    ['When is breakfast served?', 'breakfast'],
    ['And on weekends?', 'breakfast'],
  ],
  [
    ['Is there a pool?', 'spa'],
    ['When does it open?', 'spa'],
  ],
  [
    ['What time is checkout?', 'check-in'],
    ['Can I check out later?', 'check-in'],
  ],
  [
    ['Do you have wifi?', 'wifi'],
    ['What is the password?', 'wifi'],
  ],
  [
    ['Can I bring my dog?', 'pets'],
    ['How much does it cost?', 'pets'],
  ],
  [
    ['How do I get to the hotel from the airport?', 'getting-here'],
    ['How long does the taxi take?', 'getting-here'],
  ],
  [
    ['Is there a restaurant?', 'restaurant'],
    ['When does it serve dinner?', 'restaurant'],
  ],
  [
    ['Where can I charge my electric car?', 'parking'],
    ['How much is parking?', 'parking'],
  ],
  [
    ['Can I have breakfast in my room?', 'breakfast'],
    ['How much is it?', 'breakfast'],
  ],
  [
    ['Do you offer a vegan breakfast?', 'breakfast'],
    ['Where is breakfast served?', 'breakfast'],
  ],
  [
    ['Can children use the pool?', 'spa'],
    ['Until when?', 'spa'],
  ],
  [
    ['I arrive after midnight. How do I get in?', 'check-in'],
    ['Where is the bell?', 'check-in'],
  ],
  [
    ['Is the spa free?', 'spa'],
    ['Do I need to bring towels?', 'spa'],
  ],
  [
    ['Can I book a massage?', 'spa'],
    ['When should I book it?', 'spa'],
  ],
  [
    ['What time can I check in?', 'check-in'],
    ['And checkout?', 'check-in'],
  ],
  [
    ['Where is the hotel?', 'getting-here'],
    ['How far is the railway station?', 'getting-here'],
  ],
  [
    ['Does my van fit in the garage?', 'parking'],
    ['Where can I park it then?', 'parking'],
  ],
  [
    ['Is the wifi free?', 'wifi'],
    ['Does it work on the terrace?', 'wifi'],
  ],
  [
    ['What is there for dinner?', 'restaurant'],
    ['Can I book a table?', 'restaurant'],
  ],
  [
    ['Is there a gym?', null],
    ['Is there a sauna?', 'spa'],
  ],
  [
    ['When does the pool open?', 'spa'],
    ['When is breakfast?', 'breakfast'],
  ],
  [
    ['Which bus goes from the airport?', 'getting-here'],
    ['Where does it stop?', 'getting-here'],
  ],
  [
    ['Can I pay for parking at checkout?', 'parking'],
    ['When is checkout?', 'check-in'],
  ],
  [
    ['Do you have a gluten-free breakfast?', 'breakfast'],
    ['Do I need to tell you before?', 'breakfast'],
  ],
  [
    ['Is there a steam room?', 'spa'],
    ['Is it open every day?', 'spa'],
  ],
  [
    ['What is the wifi network called?', 'wifi'],
    ['Where do I find the password?', 'wifi'],
  ],
  [
    ['Do you allow pets?', 'pets'],
    ['Can they go into the spa?', 'pets'],
  ],
  [
    ['How much is a late checkout?', 'check-in'],
    ['Until what time?', 'check-in'],
  ],
  [
    ['Where can I park?', 'parking'],
    ['How much is it?', 'parking'],
    ['When is breakfast?', 'breakfast'],
  ],
  [
    ['Can I rent a bicycle?', null],
    ['Where can I park?', 'parking'],
  ],
];

/**
 * Guests who chose another language in the widget's menu, asking in it: answered from the guide
 * in their language (demo/site/guide.de.html and its siblings), or told in it that the guide does
 * not say.
 */
export const CONVERSATIONS_ABROAD: readonly { language: string; turns: (readonly [string, string | null])[] }[] = [
  {
    language: 'de-DE',
    turns: [
      ['Wo kann ich parken?', 'parking'],
      ['Was kostet das?', 'parking'],
      ['Wann gibt es Frühstück?', 'breakfast'],
    ],
  },
  {
    language: 'de-DE',
    turns: [
      ['Hat das Hotel eine Sauna?', 'spa'],
      ['Bis wann ist sie geöffnet?', 'spa'],
    ],
  },
  {
    language: 'de-DE',
    turns: [
      ['Kann ich ein Fahrrad mieten?', null],
      ['Wie ist das WLAN-Passwort?', 'wifi'],
    ],
  },
  {
    language: 'fr-FR',
    turns: [
      ['Où puis-je garer ma voiture ?', 'parking'],
      ['Combien ça coûte ?', 'parking'],
      ['À quelle heure est le petit-déjeuner ?', 'breakfast'],
    ],
  },
  {
    language: 'fr-FR',
    turns: [
      ['Est-ce que les chiens sont acceptés ?', 'pets'],
      ['Peuvent-ils aller au spa ?', 'pets'],
    ],
  },
  {
    language: 'es-ES',
    turns: [
      ['¿Dónde puedo aparcar?', 'parking'],
      ['¿Cuánto cuesta?', 'parking'],
      ['¿A qué hora es el desayuno?', 'breakfast'],
    ],
  },
  {
    language: 'es-ES',
    turns: [
      ['¿Hay piscina?', 'spa'],
      ['¿Pueden usarla los niños?', 'spa'],
    ],
  },
];

/** The share of conversations the demo must get wholly right (README, Answers from your documents; docs/performance.md). */
export const CONVERSATIONS_RIGHT = 30;

/** The guest guide and its translations, as the demo's knowledge base holds them (demo/provision.ts). */
const GUIDES = ['guide.html', 'guide.de.html', 'guide.fr.html', 'guide.es.html'].map((file) => ({
  html: readFileSync(join(import.meta.dirname, 'site', file), 'utf8'),
  url: `https://harbor.example/${file}`,
}));

type Reply = { text: string; actions: { type: string; url?: string }[] };

describeEachStore("the demo hotel's concierge in short conversations over its guest guide", (kind: StoreKind) => {
  let service: TestService;
  let agent: Awaited<ReturnType<typeof deployAgent>>;
  beforeAll(async () => {
    service = await startService(kind);
    const api = client(service.url, (await service.newCustomer('Harbor Hotel')).apiKey);
    const base = (await api.post('/api/v1/knowledge-bases', { name: 'Guide' })).body.data.id;
    for (const guide of GUIDES) {
      const added = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
        title: /<title>(.+)<\/title>/.exec(guide.html)![1],
        format: 'html',
        text: guide.html,
        url: guide.url,
      });
      expect(added.status).toBe(201);
    }
    agent = await deployAgent(service, api, { language: 'en-US', responder: { type: 'knowledge' } });
    await api.put(`/api/v1/agents/${agent.agentId}`, { knowledge_base_id: base });
  });
  afterAll(() => service?.close());

  /** Where a reply's source link points: the guide's file and the section's anchor. */
  const sourceOf = (reply: Reply) =>
    reply.actions
      .find((a) => a.type === 'link')
      ?.url?.split('/')
      .pop() ?? null;
  const sectionOf = (reply: Reply) => sourceOf(reply)?.split('#')[1] ?? null;

  /** One guest's conversation, turn by turn: what was said, and whether each answer came from the expected section. */
  async function converse(guest: string, turns: readonly (readonly [string, string | null])[], language?: string) {
    const { widget } = await agent.visitor(guest);
    const said: { question: string; reply: Reply }[] = [];
    let right = true;
    for (const [i, [question, section]] of turns.entries()) {
      widget.send({ type: 'user_turn', client_turn_id: `t${i}`, text: question, mode: 'text', language });
      const reply = (await (widget as Widget).next('reply')) as Reply;
      said.push({ question, reply });
      right &&= sectionOf(reply) === section;
    }
    widget.close();
    const transcript = said.map(
      ({ question, reply }) => `${question} → ${sectionOf(reply) ?? '(none)'}: ${reply.text}`,
    );
    return { said, right, transcript: transcript.join(' | ') };
  }

  it(`answers at least ${CONVERSATIONS_RIGHT} of ${CONVERSATIONS.length} conversations turn by turn from the right section`, async () => {
    const wrong: string[] = [];
    const replies = new Map<string, string>();
    for (const [n, conversation] of CONVERSATIONS.entries()) {
      const { said, right, transcript } = await converse(`guest-${n}`, conversation);
      if (!right) wrong.push(transcript);
      said.forEach((_, i) =>
        replies.set(
          said
            .slice(0, i + 1)
            .map((s) => s.question)
            .join('|'),
          said[i]!.reply.text,
        ),
      );
    }
    expect(CONVERSATIONS.length - wrong.length, wrong.join('\n')).toBeGreaterThanOrEqual(CONVERSATIONS_RIGHT);
    // The sentence that answers, not one beside it: the garage and its entrance, then its price.
    const replyTo = (...asked: string[]) => replies.get(asked.join('|'));
    expect(replyTo('Where can I park my car?')).toBe(
      'The garage under the hotel has forty spaces, entrance on Quay Street.',
    );
    expect(replyTo('Where can I park my car?', 'How much is it?')).toBe('A night costs 18 euros, paid at checkout.');
    expect(replyTo('Where can I park?', 'When is breakfast?')).toBe(
      'Breakfast is served from 7 to 10:30 in the garden room, and on weekends until 11.',
    );
  }, 120_000);

  it('answers a guest who chose German, French or Spanish from the guide in their language, and says in it what it does not know', async () => {
    const wrong: string[] = [];
    for (const [n, { language, turns }] of CONVERSATIONS_ABROAD.entries()) {
      const { said, right, transcript } = await converse(`abroad-${n}`, turns, language);
      const guide = `guide.${language.slice(0, 2)}.html`;
      const inTheirLanguage = said.every(({ reply }) => sourceOf(reply)?.startsWith(guide) ?? true);
      if (!right || !inTheirLanguage) wrong.push(`${language}: ${transcript}`);
    }
    expect(wrong, wrong.join('\n')).toEqual([]);
    const { said } = await converse('abroad-unknown', [['Kann ich ein Fahrrad mieten?', null]], 'de-DE');
    expect(said[0]!.reply.text).toBe('Das weiß ich leider nicht.');
    const parking = await converse('abroad-parking', [['Wo kann ich parken?', 'parking']], 'de-DE');
    expect(parking.said[0]!.reply.text).toMatch(
      /^Die Garage unter dem Hotel hat vierzig Stellplätze, Einfahrt in der Quay Street\./,
    );
  }, 60_000);
});
