import { describe, expect, it } from 'vitest';
import { inboxOrder, personWait, transcriptOf, waitingTurnsOf, withEvents } from './inbox';
import type { Conversation, StoredEvent } from './types';

const conversation = (id: string, over: Partial<Conversation>): Conversation => ({
  id,
  deployment_id: 'd',
  agent_id: 'a',
  agent_version: 1,
  status: 'open',
  end_reason: null,
  user: { sub: id, name: null },
  turn_count: 0,
  failed_turn_count: 0,
  handler: 'agent',
  handler_name: null,
  needs_person: false,
  handoff_reason: null,
  waiting_turns: 0,
  preview: false,
  last_message: null,
  handoff_at: null,
  last_activity_at: '2026-11-26T10:00:00.000Z',
  created_at: '2026-11-26T09:00:00.000Z',
  updated_at: '2026-11-26T10:00:00.000Z',
  ended_at: null,
  ...over,
});

const t1 = '11111111-1111-4111-8111-111111111111';
const t2 = '22222222-2222-4222-8222-222222222222';

describe('the inbox', () => {
  it('ages a request for a person: its minutes, long from 2, late from 5; nothing when nobody was asked for', () => {
    const at = (minutes: number) => new Date(Date.parse('2026-11-26T10:00:00.000Z') + minutes * 60_000);
    const asked = conversation('a', { needs_person: true, handoff_at: '2026-11-26T10:00:00.000Z' });
    expect(personWait(asked, at(0.5))).toEqual({ minutes: 0, level: 'new' });
    expect(personWait(asked, at(2))).toEqual({ minutes: 2, level: 'long' });
    expect(personWait(asked, at(7.9))).toEqual({ minutes: 7, level: 'late' });
    expect(personWait(conversation('b', {}), at(30))).toBeUndefined();
  });

  it('lists those needing a person first, then those with waiting turns, then the most recently active', () => {
    const ordered = inboxOrder([
      conversation('quiet-old', { last_activity_at: '2026-11-26T08:00:00.000Z' }),
      conversation('waiting', { waiting_turns: 2, last_activity_at: '2026-11-26T07:00:00.000Z' }),
      conversation('quiet-new', { last_activity_at: '2026-11-26T11:00:00.000Z' }),
      conversation('needs', { needs_person: true, last_activity_at: '2026-11-26T06:00:00.000Z' }),
    ]);
    expect(ordered.map((c) => c.id)).toEqual(['needs', 'waiting', 'quiet-new', 'quiet-old']);
  });

  it("notes the visitor's own request for a person, and what they were told while nobody came", () => {
    expect(
      transcriptOf([
        { type: 'person_requested', seq: 4 },
        { type: 'still_waiting', seq: 5 },
        { type: 'still_waiting', seq: 6, text: 'Leave your email.' },
      ]),
    ).toEqual([
      { seq: 4, who: 'notice', text: 'The visitor asked for a person' },
      { seq: 5, who: 'notice', text: 'The visitor was told nobody is free yet' },
      { seq: 6, who: 'notice', text: 'The visitor was told nobody is free yet: “Leave your email.”' },
    ]);
  });

  it("reads the events as a transcript: a streamed reply grows in part order and its final text replaces it; a person's lines carry their name, a visitor's their language", () => {
    const events: StoredEvent[] = [
      { type: 'greeting', seq: 1, text: 'Welcome to Harbor Hotel.' },
      { type: 'turn_accepted', seq: 2, turn_id: t1, client_turn_id: 'a', text: 'Pool hours?', mode: 'text' },
      { type: 'turn_acknowledged', seq: 3, turn_id: t1 },
      { type: 'reply_part', seq: 4, turn_id: t1, part: 1, text: 'to 10 pm.' },
      { type: 'reply_part', seq: 5, turn_id: t1, part: 0, text: 'From 7 am ' },
    ];
    expect(transcriptOf(events)).toEqual([
      { seq: 1, who: 'agent', text: 'Welcome to Harbor Hotel.' },
      { seq: 2, who: 'visitor', text: 'Pool hours?' },
      { seq: 4, who: 'agent', text: 'From 7 am to 10 pm.', streaming: true },
    ]);
    const more: StoredEvent[] = [
      ...events,
      { type: 'reply', seq: 6, turn_id: t1, text: 'The pool is open from 7 am to 10 pm.', actions: [] },
      { type: 'operator_joined', seq: 7, name: 'Maria' },
      {
        type: 'turn_accepted',
        seq: 8,
        turn_id: t2,
        client_turn_id: 'b',
        text: 'Handtücher?',
        mode: 'voice',
        language: 'de-DE',
      },
      { type: 'turn_acknowledged', seq: 9, turn_id: t2 },
      { type: 'message', seq: 10, text: 'One moment please.', actions: [], name: 'Maria' },
      { type: 'reply', seq: 11, turn_id: t2, text: 'On their way.', actions: [], name: 'Maria' },
      { type: 'operator_left', seq: 12, name: 'Maria' },
      { type: 'conversation_ended', seq: 13, reason: 'user_ended' },
    ];
    expect(transcriptOf(more).slice(2)).toEqual([
      { seq: 6, who: 'agent', text: 'The pool is open from 7 am to 10 pm.', streaming: false },
      { seq: 7, who: 'notice', text: 'Maria joined the conversation' },
      { seq: 8, who: 'visitor', text: 'Handtücher?', language: 'de-DE' },
      { seq: 10, who: 'person', name: 'Maria', text: 'One moment please.' },
      { seq: 11, who: 'person', name: 'Maria', text: 'On their way.' },
      { seq: 12, who: 'notice', text: 'Maria left the conversation' },
      { seq: 13, who: 'notice', text: 'The conversation ended: user ended' },
    ]);
  });

  it('knows which turns wait for an answer: acknowledged, neither replied to nor failed', () => {
    const events: StoredEvent[] = [
      { type: 'turn_accepted', seq: 1, turn_id: t1, client_turn_id: 'a', text: 'First', mode: 'text' },
      { type: 'turn_accepted', seq: 2, turn_id: t2, client_turn_id: 'b', text: 'Second', mode: 'text' },
      { type: 'turn_acknowledged', seq: 3, turn_id: t1 },
      { type: 'turn_acknowledged', seq: 4, turn_id: t2 },
    ];
    expect(waitingTurnsOf(events)).toEqual([
      { turn_id: t1, text: 'First' },
      { turn_id: t2, text: 'Second' },
    ]);
    expect(
      waitingTurnsOf([
        ...events,
        { type: 'reply', seq: 5, turn_id: t1, text: 'Done', actions: [] },
        { type: 'turn_failed', seq: 6, turn_id: t2, reason: 'reply_timeout' },
      ]),
    ).toEqual([]);
    expect(waitingTurnsOf(events.slice(0, 2))).toEqual([]);
  });

  it('adds streamed events once each, in seq order, whatever came twice', () => {
    const a: StoredEvent = { type: 'greeting', seq: 1, text: 'Hi' };
    const b: StoredEvent = { type: 'operator_joined', seq: 2, name: 'Maria' };
    const c: StoredEvent = { type: 'operator_left', seq: 3, name: 'Maria' };
    expect(withEvents([a], [c, a, b, c]).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(withEvents([a, b], [a])).toEqual([a, b]);
  });
});
