import type { ServerResponse } from 'node:http';
import { complete, type ModelCall, send, streamOf, toolCallStream } from './model-server.js';

const lastUser = (call: ModelCall) => [...call.body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

/**
 * The scripted model: as the agent it books a table with its tool, then says so, and answers
 * anything else about the spa; as a judge it finds "polite" met; as a simulated visitor it asks for
 * a table once, then is done; as the analyst it answers once with what is not JSON, then properly;
 * asked for a brief, it writes one.
 */
export function scriptedEvaluator(state: { analyses: number }) {
  return (call: ModelCall, res: ServerResponse) => {
    const model = call.body.model;
    const format = call.body.response_format?.json_schema.name;
    if (format === 'judgement') {
      const met = /polite/.test(lastUser(call));
      return complete(
        res,
        model,
        JSON.stringify({ met, reason: met ? 'The agent was polite.' : 'It never offered a discount.' }),
      );
    }
    if (format === 'visitor_line') {
      const started = /so far/.test(lastUser(call));
      return complete(
        res,
        model,
        JSON.stringify(started ? { message: '', done: true } : { message: 'Can I book a table for 4?', done: false }),
      );
    }
    // A brief asks for a summary alone: no criteria.
    const schema = call.body.response_format?.json_schema.schema as {
      properties?: { fields?: { required?: string[] }; criteria?: { required?: string[] } };
    };
    if (format === 'conversation_analysis' && !schema.properties?.criteria?.required?.length)
      return complete(
        res,
        model,
        JSON.stringify({ summary: 'Brief: a guest wants a table.', fields: {}, criteria: {} }),
      );
    if (format === 'conversation_analysis') {
      if (state.analyses++ === 0) return complete(res, model, 'Sure! Here is the analysis you asked for.');
      // What it finds, of what the agent asks for.
      const found = {
        fields: { party_size: 4, topic: 'dining' } as Record<string, unknown>,
        criteria: { booked_table: { result: 'success', reason: 'The table was booked.' } } as Record<string, unknown>,
      };
      const asked = (kind: 'fields' | 'criteria') =>
        Object.fromEntries((schema.properties?.[kind]?.required ?? []).map((name) => [name, found[kind][name]]));
      return complete(
        res,
        model,
        JSON.stringify({
          summary: 'The visitor booked a table for four.',
          fields: asked('fields'),
          criteria: asked('criteria'),
        }),
      );
    }
    const tooled = call.body.messages.some((m) => m.role === 'tool');
    if (/book/i.test(lastUser(call)) && !tooled)
      return send(res, toolCallStream(model, [{ name: 'book_table', arguments: { party_size: 4, time: '19:00' } }]));
    if (tooled) return send(res, streamOf(model, 'Your table for 4 is booked at 19:00. Enjoy your dinner!'));
    return send(res, streamOf(model, 'Our spa opens at 9. Anything else?'));
  };
}
