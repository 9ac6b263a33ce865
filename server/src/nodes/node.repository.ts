import type { Db } from '../database.js';

/** Says the node is alive now; a node whose row was removed as long dead writes it again. */
export async function beat(db: Db, id: string, startedAt: string, now: string): Promise<void> {
  const updated = await db
    .updateTable('service_nodes')
    .set({ heartbeat_at: now })
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0)
    await db.insertInto('service_nodes').values({ id, started_at: startedAt, heartbeat_at: now }).execute();
}

/** The node stopped on purpose: nothing of its work is left to take over. */
export async function removeNode(db: Db, id: string): Promise<void> {
  await db.deleteFrom('service_nodes').where('id', '=', id).execute();
}

/** Forgets nodes silent since before `before`: a node killed long ago. */
export async function forgetNodesSilentSince(db: Db, before: string): Promise<void> {
  await db.deleteFrom('service_nodes').where('heartbeat_at', '<', before).execute();
}
