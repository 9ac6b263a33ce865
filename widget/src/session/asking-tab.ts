import { sentencesOf, unspoken } from '#protocol/sentences';
import type { Remembered } from './memory';
import type { ReplyAction, ServerFrame, TurnMode } from './protocol';
import { type Line, replyKey, type View } from './transcript';

/**
 * Which tab reads out which sentence and runs which client action, when one conversation is open in
 * several: the tab that asked a turn reads its reply out (a voice turn's, sentence by sentence as
 * each completes, never one twice, across a reload too) and runs its client actions that need no
 * click; a labelled action runs once, in the tab where it is clicked; a person's message is read
 * out in the tab whose visitor last spoke. Replayed history is shown, never said or run again.
 */

/** An action the host page runs (README, Actions on a reply). */
export type ClientAction = Extract<ReplyAction, { type: 'client' }>;

/** This tab asked a turn (or its voice will become one): its reply is this tab's to say and run. */
export function ask(memory: Remembered, clientTurnId: string, mode: TurnMode): void {
  memory.asked[clientTurnId] = { mode, spoken: 0 };
  memory.mode = mode;
}

/** What this tab does with a frame of a turn's answer. */
export interface TabsPart {
  /** The question's line, when this page shows it. */
  question: Line | undefined;
  /** Whether this tab reads the reply out: it asked by voice. */
  speak: boolean;
  /** The sentences to read out now, and the number of the first of them in the reply. */
  say: string[];
  from: number;
  /** The client actions to run now: the final reply's that need no click. */
  run: ClientAction[];
  /** Whether the tab's memory changed (what was read out, a turn answered): it is written again. */
  changed: boolean;
}

/** A turn's reply (or failure) as it comes, `view` with the frame applied; a turn asked here is forgotten once answered or failed. */
export function tabsPart(
  memory: Remembered,
  view: View,
  frame: Extract<ServerFrame, { type: 'reply_part' | 'reply' | 'turn_failed' }>,
): TabsPart {
  const question = view.lines.find((l) => l.who === 'user' && l.turnId === frame.turn_id);
  const clientTurnId = question?.clientTurnId ?? '';
  const asked = memory.asked[clientTurnId];
  const part: TabsPart = { question, speak: asked?.mode === 'voice', say: [], from: 0, run: [], changed: false };
  if (!asked) return part;
  const final = frame.type === 'reply';
  if (frame.type !== 'turn_failed' && part.speak) {
    const text = final ? frame.text : (view.lines.find((l) => l.key === replyKey(frame.turn_id))?.text ?? '');
    const next = unspoken(text, final, asked.spoken);
    part.from = asked.spoken;
    part.changed = next.spoken !== asked.spoken;
    asked.spoken = next.spoken;
    part.say = next.sentences;
  }
  if (final) part.run = (frame.actions ?? []).filter((a): a is ClientAction => a.type === 'client' && !a.label);
  if (final || frame.type === 'turn_failed') {
    delete memory.asked[clientTurnId];
    part.changed = true;
  }
  return part;
}

/** The sentences of a person's message to read out here: where the visitor last spoke, never on replay. */
export const messageToSay = (memory: Remembered, text: string, replayed: boolean): string[] =>
  !replayed && memory.mode === 'voice' ? sentencesOf(text, true) : [];

/** A labelled client action the visitor clicked, to run now: once per page (`ran` holds `lineKey:index`). */
export function clicked(line: Line | undefined, index: number, ran: Set<string>): ClientAction | undefined {
  const action = line?.actions?.[index];
  const key = `${line?.key}:${index}`;
  if (action?.type !== 'client' || !action.label || ran.has(key)) return undefined;
  ran.add(key);
  return action;
}
