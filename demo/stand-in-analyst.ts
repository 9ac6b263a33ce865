/**
 * The demo hotel's stand-in analyst (README, Tests and analysis): an OpenAI-compatible chat
 * completions endpoint that answers the service's analysis requests by a few keyword rules, so QA
 * sees a conversation analysed on a machine with no language model. It is rules, not a model, and
 * says so in each summary. It also judges the hotel agent's sentences by its topic rule (README,
 * Variables and guardrails), by keywords of what a hotel is not for. Asked anything else (a test's
 * judge, a simulated visitor) it answers 501, which the service reports as "could not say".
 */

const NUMBERS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8 };
const TOPICS: [string, RegExp][] = [
  ['dining', /table|dinner|restaurant/i],
  ['breakfast', /breakfast/i],
  ['rooms', /\broom/i],
  ['spa', /\bspa\b|pool|sauna/i],
];
/** What the hotel's concierge is not for: a sentence about one of these leaves its topics. */
const OFF_TOPIC =
  /\b(homework|essay|poem|photosynthesis|bitcoin|crypto\w*|election|javascript|python|stock market|recipe for)\b/i;
const PERSON = /\b(a person|reception|human|someone real)\b/i;
const HELD = /held in your name|is booked|booked for you/i;

interface Said {
  visitor: string[];
  agent: string[];
}

/** The conversation the service sent, between its <conversation> tags, by who said each line. */
function saidIn(content: string): Said {
  const text = /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(content)?.[1] ?? '';
  const said: Said = { visitor: [], agent: [] };
  for (const line of text.split('\n')) {
    if (line.startsWith('Visitor: ')) said.visitor.push(line.slice(9));
    else if (line.startsWith('Agent: ')) said.agent.push(line.slice(7));
  }
  return said;
}

function partySize(said: Said): number | null {
  const m = /table for (\d+|one|two|three|four|five|six|seven|eight)\b/i.exec(
    [...said.agent, ...said.visitor].join(' '),
  );
  if (!m) return null;
  return Number(m[1]) || NUMBERS[m[1]!.toLowerCase()] || null;
}

/** What the rules find, shaped by the schema the service asked with (only the fields and criteria it names). */
export function analysed(content: string, schema: { properties?: Record<string, any> }): Record<string, unknown> {
  const said = saidIn(content);
  const asked = said.visitor.join(' ');
  const topic = TOPICS.find(([, words]) => words.test(asked))?.[0] ?? 'other';
  const booked = said.agent.some((line) => HELD.test(line));
  const person = PERSON.test(asked);
  const size = partySize(said);
  const found: Record<string, { value: unknown; reason?: string }> = {
    party_size: { value: size },
    topic: { value: topic },
    booked_table: {
      value: booked ? 'success' : 'failure',
      reason: booked ? 'The agent said the table is held.' : 'No table was held.',
    },
    asked_for_person: {
      value: person ? 'success' : 'failure',
      reason: person ? 'The guest asked for a person.' : 'The guest did not ask for a person.',
    },
  };
  const fields = Object.keys(schema.properties?.fields?.properties ?? {});
  const criteria = Object.keys(schema.properties?.criteria?.properties ?? {});
  const summary = [
    `The guest asked about ${topic}${size ? ` (a party of ${size})` : ''}.`,
    booked ? 'A table was held for them.' : '',
    person ? 'They asked for a person.' : '',
    "(The demo's stand-in analyst: keyword rules, not a model.)",
  ]
    .filter(Boolean)
    .join(' ');
  return {
    ...(schema.properties?.summary ? { summary } : {}),
    fields: Object.fromEntries(fields.map((name) => [name, found[name]?.value ?? null])),
    criteria: Object.fromEntries(
      criteria.map((id) => [
        id,
        found[id]
          ? { result: found[id].value, reason: found[id].reason }
          : { result: 'unknown', reason: 'The stand-in analyst has no rule for it.' },
      ]),
    ),
  };
}

/** Its answer to one chat completion request: a JSON `chat.completion`, or a refusal. */
export function standInAnswer(request: unknown): { status: number; body: unknown } {
  const body = request as {
    model?: string;
    messages?: { role: string; content: string }[];
    response_format?: { json_schema?: { name?: string; schema?: Record<string, any> } };
  };
  const format = body.response_format?.json_schema;
  if (format?.name === 'guardrail_verdict') return completion(body.model, JSON.stringify(judged(body.messages ?? [])));
  if (format?.name !== 'conversation_analysis' || !format.schema)
    return { status: 501, body: { error: { message: "the demo's stand-in analyst only analyses conversations" } } };
  const conversation = body.messages?.find((m) => m.role === 'user')?.content ?? '';
  return completion(body.model, JSON.stringify(analysed(conversation, format.schema)));
}

/** The rules a sentence breaks, by number: the topic rule by its keywords; a custom criterion it cannot judge never. */
export function judged(messages: { role: string; content: string }[]): { broken: number[] } {
  const rules = /Rules:\n([\s\S]*?)\nAnswer/.exec(messages[0]?.content ?? '')?.[1]?.split('\n') ?? [];
  let sentence = '';
  try {
    sentence =
      (JSON.parse((messages[1]?.content ?? '').replace(/^\[Data\] /, '')) as { sentence?: string }).sentence ?? '';
  } catch {
    // Not the service's question: nothing is judged broken.
  }
  const topic = rules.findIndex((rule) => rule.includes('something other than these topics'));
  return { broken: topic >= 0 && OFF_TOPIC.test(sentence) ? [topic + 1] : [] };
}

function completion(model: string | undefined, content: string): { status: number; body: unknown } {
  return {
    status: 200,
    body: {
      id: 'chatcmpl-demo',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: model ?? 'demo-analyst',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    },
  };
}
