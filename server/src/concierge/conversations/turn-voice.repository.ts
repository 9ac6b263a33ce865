import type { Db, Trx } from '../../database.js';
import { isTurn, type TurnRow, type TurnScope } from './turn.repository.js';

// What the visitor heard of a spoken reply (README, The agent's own voice), and how long a hands-free
// visitor waited for it (README, Hands-free voice).

export async function setHeard(
  trx: Trx,
  id: string,
  heard: Pick<TurnRow, 'heard_text' | 'heard_interrupted' | 'heard_at'>,
): Promise<void> {
  await trx.updateTable('turns').set(heard).where('id', '=', id).execute();
}

/**
 * A hands-free turn's time from the end of the visitor's speech to its reply's first audio (README,
 * Hands-free voice), kept once; false for a turn that has it already, or was not found in an open mic.
 */
export async function setFirstAudio(trx: Trx, scope: TurnScope, ms: number): Promise<boolean> {
  const result = await trx
    .updateTable('turns')
    .set({ voice_first_audio_ms: ms })
    .where((eb) => isTurn(eb, scope))
    .where('voice_speech_ms', 'is not', null)
    .where('voice_first_audio_ms', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What was heard of the reply to the turn before `turn` in its conversation, if it was spoken: for the next hook call. */
export async function heardBefore(
  db: Db,
  turn: Pick<TurnRow, 'conversation_id' | 'created_at' | 'id'>,
): Promise<Pick<TurnRow, 'id' | 'heard_text' | 'heard_interrupted'> | undefined> {
  const previous = await db
    .selectFrom('turns')
    .select(['id', 'heard_text', 'heard_interrupted'])
    .where('conversation_id', '=', turn.conversation_id)
    .where('id', '!=', turn.id)
    .where('created_at', '<=', turn.created_at)
    .where('status', '=', 'resolved')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return previous?.heard_text == null ? undefined : previous;
}

/** What the visitor heard of these turns' spoken replies, where the widget said. */
export async function heardOfTurns(
  db: Db,
  ids: readonly string[],
): Promise<Pick<TurnRow, 'id' | 'heard_text' | 'heard_interrupted'>[]> {
  if (!ids.length) return [];
  return db
    .selectFrom('turns')
    .select(['id', 'heard_text', 'heard_interrupted'])
    .where('id', 'in', ids)
    .where('heard_text', 'is not', null)
    .execute();
}
