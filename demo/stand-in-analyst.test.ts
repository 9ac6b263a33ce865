import { describe, expect, it } from 'vitest';
import { analysisJsonSchema } from '../server/src/concierge/analysis/analyst.js';
import { DEMO_ANALYSIS } from './quality.js';
import { analysed, judged, standInAnswer } from './stand-in-analyst.js';

const schema = analysisJsonSchema(DEMO_ANALYSIS as never) as never;
const conversation = (lines: string[]) => `<conversation>\n${lines.join('\n')}\n</conversation>`;

describe("the demo's stand-in analyst", () => {
  it('finds a booked table, its party and topic, in the shape the service asked', () => {
    const found = analysed(
      conversation([
        'Visitor: A table for dinner at 8 pm, please',
        'Agent: Done: a table for two at 8:00 pm is held in your name at the restaurant by the water.',
      ]),
      schema,
    );
    expect(found).toEqual({
      summary:
        "The guest asked about dining (a party of 2). A table was held for them. (The demo's stand-in analyst: keyword rules, not a model.)",
      fields: { party_size: 2, topic: 'dining' },
      criteria: {
        booked_table: { result: 'success', reason: 'The agent said the table is held.' },
        asked_for_person: { result: 'failure', reason: 'The guest did not ask for a person.' },
      },
    });
  });

  it('finds a request for a person, and refuses what it cannot do', () => {
    const found = analysed(conversation(['Visitor: Can I talk to a person?', 'Agent: Someone joins you.']), schema);
    expect(found.criteria).toMatchObject({
      asked_for_person: { result: 'success' },
      booked_table: { result: 'failure' },
    });
    expect(found.fields).toEqual({ party_size: null, topic: 'other' });
    expect(standInAnswer({ response_format: { json_schema: { name: 'judgement', schema: {} } } }).status).toBe(501);
  });

  it("judges the hotel agent's sentences by its topic rule, keywords of what a hotel is not for", () => {
    const ask = (sentence: string) => [
      {
        role: 'system',
        content:
          'Rules:\n1. It is about something other than these topics: the hotel.\n2. It promises a discount.\nAnswer with…',
      },
      { role: 'user', content: `[Data] ${JSON.stringify({ visitor_asked: 'x', said_before: '', sentence })}` },
    ];
    expect(judged(ask('Here is your essay on the French Revolution.'))).toEqual({ broken: [1] });
    expect(judged(ask('Breakfast is from 7 to 10:30.'))).toEqual({ broken: [] });
    const answered = standInAnswer({
      response_format: { json_schema: { name: 'guardrail_verdict', schema: {} } },
      messages: ask('A poem about the sea.'),
    });
    expect(answered.status).toBe(200);
    expect(JSON.parse((answered.body as any).choices[0].message.content)).toEqual({ broken: [1] });
  });
});
