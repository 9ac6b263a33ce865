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
    const answered = applyEvent(thinking, { type: 'reply', seq: 4, turn_id: 't1', text: 'From 7.' });
    expect(answered.lines.map((l) => [l.who, l.text, l.state])).toEqual([
      ['agent', 'Welcome', undefined],
      ['user', 'Breakfast?', 'answered'],
      ['agent', 'From 7.', undefined],
    ]);
    expect(replay([...frames, { type: 'reply', seq: 4, turn_id: 't1', text: 'From 7.' }])).toEqual(answered);
  });

  it("merges the server's confirmation into the line shown while sending, instead of a second line", () => {
    const sending: View = { ...emptyView(), lines: [{ key: 'c1', who: 'user', text: 'Hi', mode: 'text', clientTurnId: 'c1', state: 'sending' }] };
    const view = applyEvent(sending, { type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: 'c1', text: 'Hi', mode: 'text' });
    expect(view.lines).toEqual([{ key: 'c1', who: 'user', text: 'Hi', mode: 'text', clientTurnId: 'c1', turnId: 't1', state: 'sent' }]);
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
