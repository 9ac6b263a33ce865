import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pocketsphinx } from '../../server/src/concierge/speech/pocketsphinx.js';
import { onlyEcho } from '../../server/src/concierge/speech/turn-taking.js';
import { spoken } from '../../server/test/audio.js';

/** What the agent says (its voice coming back through a microphone without echo cancellation), and what a visitor says over it. */
const AGENT = [
  'Breakfast is served from seven to half past ten in the garden.',
  'Our rooms all face the harbour and each has a balcony.',
  'Check in is from three in the afternoon and check out is by eleven.',
  'The spa on the roof is open every day until nine in the evening.',
  'Parking is under the hotel with the entrance on Quay Street.',
  'I can book you a table for dinner at the restaurant tonight.',
  'The nearest station is a ten minute walk along the water.',
  'Yes, pets are welcome in the garden rooms for a small fee.',
];
const VISITOR = [
  'How much is a room for two nights?',
  'Can I bring my dog?',
  'Is there a gym in the hotel?',
  'What time does the restaurant close?',
];

export interface EchoFigures {
  /** The agent's sentences whose recognised words the service takes for echo (and so does not interrupt on). */
  echoIgnored: number;
  echoSaid: number;
  /** The visitor's questions, said over each agent sentence, taken for echo by mistake. */
  visitorIgnored: number;
  visitorSaid: number;
}

/**
 * How well the service tells the agent's own voice coming back from the visitor's speech (README,
 * Hands-free voice: echo) with the recogniser this machine has, PocketSphinx: each agent sentence,
 * spoken by espeak-ng (the service's own voice here), recognised and checked against what the agent
 * is saying; and each visitor question checked against each agent sentence.
 */
export async function echoFigures(): Promise<EchoFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-echo-bench-'));
  const recogniser = pocketsphinx();
  const heard = async (text: string) =>
    recogniser.recognise({ pcm: spoken(text, dir), sampleRate: 16_000, language: 'en' }, new AbortController().signal);
  try {
    let echoIgnored = 0;
    for (const sentence of AGENT) if (onlyEcho(await heard(sentence), sentence)) echoIgnored++;
    let visitorIgnored = 0;
    for (const question of VISITOR) {
      const words = await heard(question);
      for (const sentence of AGENT) if (onlyEcho(words, sentence)) visitorIgnored++;
    }
    return {
      echoIgnored,
      echoSaid: AGENT.length,
      visitorIgnored,
      visitorSaid: VISITOR.length * AGENT.length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
