import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardrailsSpec } from '../../server/src/agents/agent-guardrails.js';
import {
  conversationValues,
  inBody,
  inPrompt,
  inUrl,
  inWords,
} from '../../server/src/concierge/conversations/conversation-variables.js';
import type { ConversationRow } from '../../server/src/concierge/conversations/conversation.repository.js';
import { ReplyGuard, sentenceJudge } from '../../server/src/concierge/models/guardrails.js';
import { PartWriter } from '../../server/src/concierge/models/part-writer.js';
import { parseAllowedHosts } from '../../server/src/shared/egress.js';
import type { DeploymentContext } from '../../server/src/deployments/deployment-context.js';
import { type Spread, spread } from '../stats.js';

/** Sentences timed (after a warm-up), and sentences judged by the model server. */
export const GUARDRAILS = { sentences: 20_000, warmUp: 2_000, judged: 400, terms: 50 } as const;

const SENTENCES = [
  'Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11.',
  'Parking is in the garage behind the hotel, 18 euros a night.',
  'The spa, with its sauna and pool, is open from 9 to 21 every day.',
  'Checkout is at 11, and we are happy to keep your luggage until the evening.',
];
const sentence = (i: number) => `${SENTENCES[i % SENTENCES.length]!.slice(0, -1)} (${i}). `;

/** A hotel's guardrails: fifty blocked terms, the injection mark; with `custom`, one criterion judged by a model. */
const rulesOf = (custom: boolean) =>
  guardrailsSpec.parse({
    blocked_terms: Array.from({ length: GUARDRAILS.terms }, (_, i) => `rival hotel ${i}`),
    ...(custom ? { custom: [{ criterion: 'promises a discount', action: 'refuse' }] } : {}),
  });

/** From a sentence the model completes to its part handed to the store (µs), one writer a reply as the responder has. */
async function sentenceToPart(guard: ReplyGuard | undefined, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    let started = 0;
    let done!: () => void;
    const handed = new Promise<void>((resolve) => (done = resolve));
    const writer = new PartWriter(
      {
        part: async () => {
          times.push((performance.now() - started) * 1000);
          done();
        },
      },
      { quiet: false },
      guard ? { check: (s, before) => guard.check(s, before), onStop: () => undefined } : undefined,
    );
    started = performance.now();
    writer.write(sentence(i));
    await handed;
  }
  return times;
}

/** The delay guardrails add to a sentence without custom criteria: the check alone, and sentence to part with and without it (µs). */
export async function guardDelayFigures(): Promise<{ check: Spread; bare: Spread; guarded: Spread }> {
  const guard = new ReplyGuard(rulesOf(false), { canary: 'a1b2c3d4e5f6', asked: 'When is breakfast?', judge: 'none' });
  for (let i = 0; i < GUARDRAILS.warmUp; i++) guard.atOnce(sentence(i));
  const check: number[] = [];
  for (let i = 0; i < GUARDRAILS.sentences; i++) {
    const said = sentence(i);
    const started = performance.now();
    await guard.check(said, '');
    check.push((performance.now() - started) * 1000);
  }
  await sentenceToPart(undefined, GUARDRAILS.warmUp);
  await sentenceToPart(guard, GUARDRAILS.warmUp);
  const bare = await sentenceToPart(undefined, GUARDRAILS.sentences);
  const guarded = await sentenceToPart(guard, GUARDRAILS.sentences);
  return { check: spread(check), bare: spread(bare), guarded: spread(guarded) };
}

/**
 * A custom criterion judged by a model that answers at once (a local chat completions server):
 * sentence to part (ms), the model's own time measured on its socket's side, and the difference.
 */
export async function judgedFigures(): Promise<{ total: Spread; model: Spread; beyond: Spread }> {
  const modelMs: number[] = [];
  const server = createServer((req, res) => {
    const started = performance.now();
    req.resume().on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-bench',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: '{"broken":[]}' }, finish_reason: 'stop' }],
        }),
      );
      modelMs.push(performance.now() - started);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const judge = await sentenceJudge(
      {
        judges: { of: async () => ({ baseUrl, key: undefined, model: 'judge' }) },
        egress: { allowedHosts: parseAllowedHosts('*@127.0.0.1') },
      },
      { customerId: '00000000-0000-4000-8000-000000000000' } as DeploymentContext,
    );
    const guard = new ReplyGuard(rulesOf(true), { canary: 'a1b2c3d4e5f6', asked: 'When is breakfast?', judge });
    await sentenceToPart(guard, 50);
    modelMs.length = 0;
    const total = (await sentenceToPart(guard, GUARDRAILS.judged)).map((us) => us / 1000);
    const beyond = total.map((ms, i) => ms - (modelMs[i] ?? 0));
    return { total: spread(total), model: spread(modelMs), beyond: spread(beyond) };
  } finally {
    server.close();
  }
}

/** Every template of a turn rendered: persona and instructions for the model, the greeting, a tool's URL and body (µs). */
export function templateFigures(): Spread {
  const conversation = {
    id: '3f1c2a4e-0000-4000-8000-000000000000',
    user_name: 'Ada Lovelace',
    user_ctx: JSON.stringify({ room: '214', booking: { id: 'B-4711' }, plan: 'gold' }),
    page_context: JSON.stringify({ plan: 'family', nights: 3 }),
  } as ConversationRow;
  const persona = 'You are the concierge of the Harbor Hotel, speaking with {{visitor.name|a guest}}.';
  const instructions =
    'The guest is in room {{ctx.room}} on the {{ctx.plan|standard}} plan, booking {{ctx.booking.id}}, looking at {{page.context.plan|rooms}} for {{page.context.nights|a few}} nights. Today is {{now}}; answer in {{conversation.language}}.';
  const greeting = 'Hello {{visitor.name|there}}, welcome back to room {{ctx.room}}.';
  const url = 'https://hotel.example/api/bookings/{{ctx.booking.id}}?lang={{conversation.language}}';
  const body = { booking: '{{ctx.booking.id}}', page: '{{page.url|none}}', conversation: '{{conversation.id}}' };
  const times: number[] = [];
  for (let i = 0; i < GUARDRAILS.warmUp + GUARDRAILS.sentences; i++) {
    const started = performance.now();
    const values = conversationValues({
      conversation,
      language: 'en-GB',
      page: { url: 'https://hotel.example/rooms', title: 'Rooms' },
      now: new Date(),
    });
    inPrompt(values)(persona);
    inPrompt(values)(instructions);
    inWords(values)(greeting);
    inUrl(values)(url);
    inBody(body, values);
    if (i >= GUARDRAILS.warmUp) times.push((performance.now() - started) * 1000);
  }
  return spread(times);
}
