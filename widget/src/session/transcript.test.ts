import { describe, expect, it } from 'vitest';
import type { ServerFrame } from './protocol';
import { applyEvent, emptyView, type View } from './transcript';

const replay = (frames: ServerFrame[], from: View = emptyView()): View => frames.reduce(applyEvent, from);

describe('the transcript built from stored events', () => {
  it('follows a turn from sent to thinking to answered, and a replay rebuilds the same lines', () => {
    const frames: ServerFrame[] = [
      { type: 'greeting', seq: 1, text: 'Welcome' },
      { type: 'turn_accepted', seq: 2, turn_id: 't1', client_turn_id: 'c1', text: 'Breakfast?', mode: 'voice' },
      { type: 'turn_acknowledged', seq: 3, turn_id: 't1' },
    ];
    const thinking = replay(frames);
    expect(thinking.lines.map((l) => [l.who, l.text, l.state])).toEqual([
      ['agent', 'Welcome', undefined],
      ['user', 'Breakfast?', 'thinking'],
    ]);
    const answered = applyEvent(thinking, { type: 'reply', seq: 4, turn_id: 't1', text: 'From 7.', actions: [] });
    expect(answered.lines.map((l) => [l.who, l.text, l.state])).toEqual([
      ['agent', 'Welcome', undefined],
      ['user', 'Breakfast?', 'answered'],
      ['agent', 'From 7.', undefined],
    ]);
    expect(replay([...frames, { type: 'reply', seq: 4, turn_id: 't1', text: 'From 7.', actions: [] }])).toEqual(
      answered,
    );
  });

  it("marks a reply with the visitor's last rating, and nothing else", () => {
    const frames: ServerFrame[] = [
      { type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: 'c1', text: 'Breakfast?', mode: 'text' },
      { type: 'reply', seq: 2, turn_id: 't1', text: 'From 7.', actions: [] },
      { type: 'feedback_recorded', seq: 3, turn_id: 't1', rating: 'up' },
      { type: 'feedback_recorded', seq: 4, turn_id: 't1', rating: 'down' },
    ];
    expect(replay(frames).lines.map((l) => [l.who, l.rating])).toEqual([
      ['user', undefined],
      ['agent', 'down'],
    ]);
  });

  it('shows parts in order as they come, a gap waiting for its part, then replaces them in place with the final reply', () => {
    const asked: ServerFrame[] = [
      { type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: 'c1', text: 'Dinner?', mode: 'voice' },
      { type: 'turn_acknowledged', seq: 2, turn_id: 't1' },
    ];
    const first = replay([...asked, { type: 'reply_part', seq: 3, turn_id: 't1', part: 0, text: 'We serve ' }]);
    expect(first.lines.map((l) => [l.who, l.text, l.state])).toEqual([
      ['user', 'Dinner?', 'answering'],
      ['agent', 'We serve ', undefined],
    ]);
    // Part 2 before part 1: nothing new shows until the gap is filled.
    const gap = applyEvent(first, { type: 'reply_part', seq: 4, turn_id: 't1', part: 2, text: 'until 22.' });
    expect(gap.lines[1]!.text).toBe('We serve ');
    const filled = applyEvent(gap, { type: 'reply_part', seq: 5, turn_id: 't1', part: 1, text: 'dinner from 18 ' });
    expect(filled.lines[1]!.text).toBe('We serve dinner from 18 until 22.');
    const actions = [{ type: 'quick_reply' as const, label: 'Book', text: 'Book a table' }];
    const final = applyEvent(filled, { type: 'reply', seq: 6, turn_id: 't1', text: 'Dinner: 18 to 22.', actions });
    // The same line (same key), now with the final text and no parts: nothing is added or removed.
    expect(final.lines).toEqual([
      { ...filled.lines[0], state: 'answered' },
      { key: filled.lines[1]!.key, who: 'agent', text: 'Dinner: 18 to 22.', turnId: 't1', actions },
    ]);
    // A replay rebuilds it, and a part replayed after the final reply does not undo it.
    const frames: ServerFrame[] = [
      ...asked,
      { type: 'reply_part', seq: 3, turn_id: 't1', part: 0, text: 'We serve ' },
      { type: 'reply', seq: 6, turn_id: 't1', text: 'Dinner: 18 to 22.', actions },
    ];
    expect(replay(frames)).toEqual(final);
    expect(applyEvent(final, { type: 'reply_part', seq: 7, turn_id: 't1', part: 3, text: 'late' })).toBe(final);
  });

  it('keeps what streamed of a reply that then failed, beside the failure', () => {
    const view = replay([
      { type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: 'c1', text: 'Spa?', mode: 'text' },
      { type: 'turn_acknowledged', seq: 2, turn_id: 't1' },
      { type: 'reply_part', seq: 3, turn_id: 't1', part: 0, text: 'The spa' },
      { type: 'turn_failed', seq: 4, turn_id: 't1', reason: 'reply_timeout' },
    ]);
    expect(view.lines.map((l) => [l.who, l.text, l.state])).toEqual([
      ['user', 'Spa?', 'failed'],
      ['agent', 'The spa', undefined],
    ]);
  });

  it('shows a person joining, their answers and messages with their name, and their leaving', () => {
    const handled = replay([
      { type: 'operator_joined', seq: 1, name: 'Maria' },
      { type: 'turn_accepted', seq: 2, turn_id: 't1', client_turn_id: 'c1', text: 'Key card?', mode: 'text' },
      { type: 'turn_acknowledged', seq: 3, turn_id: 't1' },
    ]);
    // Who is answering: the panel says "Maria is writing…", not the agent's "thinking".
    expect(handled.person).toBe('Maria');
    const view = replay([
      { type: 'operator_joined', seq: 1, name: 'Maria' },
      { type: 'turn_accepted', seq: 2, turn_id: 't1', client_turn_id: 'c1', text: 'Key card?', mode: 'text' },
      { type: 'turn_acknowledged', seq: 3, turn_id: 't1' },
      { type: 'reply', seq: 4, turn_id: 't1', text: 'On its way.', actions: [], name: 'Maria' },
      { type: 'message', seq: 5, text: 'Anything else?', actions: [], name: 'Maria' },
      { type: 'operator_left', seq: 6, name: 'Maria' },
    ]);
    expect(view.lines.map((l) => [l.who, l.text, l.name, l.note])).toEqual([
      ['agent', '', 'Maria', 'joined'],
      ['user', 'Key card?', undefined, undefined],
      ['agent', 'On its way.', 'Maria', undefined],
      ['agent', 'Anything else?', 'Maria', undefined],
      ['agent', '', 'Maria', 'left'],
    ]);
    expect(view.person).toBeUndefined();
  });

  it("notes the visitor's request for a person where it was made, and each time nobody has come yet", () => {
    const view = replay([
      { type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: 'c1', text: 'Dogs?', mode: 'text' },
      { type: 'turn_acknowledged', seq: 2, turn_id: 't1' },
      { type: 'person_requested', seq: 3 },
      { type: 'still_waiting', seq: 4 },
      { type: 'still_waiting', seq: 5, text: 'Leave your email, please.' },
    ]);
    expect(view.lines.map((l) => [l.who, l.note, l.state, l.text])).toEqual([
      ['user', undefined, 'thinking', 'Dogs?'],
      ['agent', 'requested', undefined, ''],
      ['agent', 'still_waiting', undefined, ''],
      ['agent', 'still_waiting', undefined, 'Leave your email, please.'],
    ]);
  });

  it("merges the server's confirmation into the line shown while sending, instead of a second line", () => {
    const sending: View = {
      ...emptyView(),
      lines: [{ key: 'c1', who: 'user', text: 'Hi', mode: 'text', clientTurnId: 'c1', state: 'sending' }],
    };
    const view = applyEvent(sending, {
      type: 'turn_accepted',
      seq: 1,
      turn_id: 't1',
      client_turn_id: 'c1',
      text: 'Hi',
      mode: 'text',
    });
    expect(view.lines).toEqual([
      { key: 'c1', who: 'user', text: 'Hi', mode: 'text', clientTurnId: 'c1', turnId: 't1', state: 'sent' },
    ]);
  });

  it('marks a failed turn with its reason, and an ended conversation', () => {
    const view = replay([
      { type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: 'c1', text: 'Spa?', mode: 'text' },
      { type: 'turn_failed', seq: 2, turn_id: 't1', reason: 'hook_rejected' },
      { type: 'conversation_ended', seq: 3, reason: 'deployment_inactive' },
    ]);
    expect(view.lines[0]).toMatchObject({ state: 'failed', reason: 'hook_rejected' });
    expect([view.status, view.ended]).toEqual(['ended', 'deployment_inactive']);
  });
});
