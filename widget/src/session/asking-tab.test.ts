import { describe, expect, it } from 'vitest';
import { ask, clicked, messageToSay, tabsPart } from './asking-tab';
import { forgotten, type Remembered } from './memory';
import type { ReplyAction } from './protocol';
import { emptyView, type Line, replyKey, type View } from './transcript';

const question = (clientTurnId: string, turnId: string): Line => ({
  key: clientTurnId,
  who: 'user',
  text: 'When is breakfast?',
  mode: 'voice',
  clientTurnId,
  turnId,
  state: 'sent',
});
const replyLine = (turnId: string, text: string): Line => ({ key: replyKey(turnId), who: 'agent', text, turnId });
const viewWith = (...lines: Line[]): View => ({ ...emptyView(), lines });
const opens: ReplyAction = { type: 'client', name: 'openMenu' };
const labelled: ReplyAction = { type: 'client', name: 'book', label: 'Book a table' };

describe('which tab reads out which sentence and runs which client action', () => {
  it("reads a voice turn's reply as its sentences complete, each once, and forgets the turn once answered", () => {
    const memory: Remembered = forgotten();
    ask(memory, 'c1', 'voice');
    expect(memory).toMatchObject({ mode: 'voice', asked: { c1: { mode: 'voice', spoken: 0 } } });
    const part = (text: string) =>
      tabsPart(memory, viewWith(question('c1', 't1'), replyLine('t1', text)), {
        type: 'reply_part',
        seq: 3,
        turn_id: 't1',
        part: 0,
        text,
      });
    expect(part('Breakfast is from seven')).toMatchObject({ speak: true, say: [], changed: false });
    expect(part('Breakfast is from seven. It ends at ten')).toMatchObject({
      say: ['Breakfast is from seven.'],
      changed: true,
    });
    const final = tabsPart(memory, viewWith(question('c1', 't1')), {
      type: 'reply',
      seq: 4,
      turn_id: 't1',
      text: 'Breakfast is served from seven. It ends at ten.',
      actions: [opens, labelled],
    });
    expect(final).toMatchObject({ speak: true, say: ['It ends at ten.'], run: [opens], changed: true });
    expect(memory.asked).toEqual({});
  });

  it("says nothing of a text turn's reply, still runs its actions; another tab neither says nor runs", () => {
    const memory = forgotten();
    ask(memory, 'c1', 'text');
    const reply = { type: 'reply' as const, seq: 4, turn_id: 't1', text: 'Yes. Sure.', actions: [opens] };
    expect(tabsPart(memory, viewWith(question('c1', 't1')), reply)).toMatchObject({
      speak: false,
      say: [],
      run: [opens],
    });
    const elsewhere = forgotten();
    expect(tabsPart(elsewhere, viewWith(question('c1', 't1')), reply)).toMatchObject({
      speak: false,
      say: [],
      run: [],
      changed: false,
    });
  });

  it('forgets a failed turn', () => {
    const memory = forgotten();
    ask(memory, 'c1', 'voice');
    const failed = tabsPart(memory, viewWith(question('c1', 't1')), {
      type: 'turn_failed',
      seq: 5,
      turn_id: 't1',
      reason: 'hook_failed',
    });
    expect(failed).toMatchObject({ say: [], run: [], changed: true });
    expect(memory.asked).toEqual({});
  });

  it("reads a person's message where the visitor last spoke, never on replay", () => {
    const memory = forgotten();
    expect(messageToSay(memory, 'Hello. I am Maria.', false)).toEqual([]);
    ask(memory, 'c1', 'voice');
    expect(messageToSay(memory, 'Hello. I am Maria.', false)).toEqual(['Hello.', 'I am Maria.']);
    expect(messageToSay(memory, 'Hello. I am Maria.', true)).toEqual([]);
  });

  it('runs a labelled action once per page, when clicked; nothing else is clickable', () => {
    const ran = new Set<string>();
    const line: Line = { ...replyLine('t1', 'Shall I?'), actions: [opens, labelled] };
    expect(clicked(line, 1, ran)).toEqual(labelled);
    expect(clicked(line, 1, ran)).toBeUndefined();
    expect(clicked(line, 0, ran)).toBeUndefined();
    expect(clicked(undefined, 0, ran)).toBeUndefined();
    expect([...ran]).toEqual([`${replyKey('t1')}:1`]);
  });
});
