import type { Kysely, Migration } from 'kysely';

/**
 * Which node calls a pending turn's hook, and each node's heartbeat (README, Running several
 * nodes): a live node takes over the hook calls of one that went silent, instead of leaving its
 * turns pending until the stale-pending sweep fails them.
 */
export const hookNodes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('service_nodes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.alterTable('turns').addColumn('hook_node', 'text').execute();
    await db.schema.createIndex('turns_pending_hook_node').on('turns').columns(['status', 'hook_node']).execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('turns_pending_hook_node').execute();
    await db.schema.alterTable('turns').dropColumn('hook_node').execute();
    await db.schema.dropTable('service_nodes').execute();
  },
};
