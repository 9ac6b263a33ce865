import { type Kysely, type Migration, sql } from 'kysely';

/** Immutable agent versions (README, The management API), deployments pinned to one, conversations keeping theirs. */
export const agentVersions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('agent_versions')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('agent_spec', 'text', (c) => c.notNull())
      .addColumn('published_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_versions_pk', ['agent_id', 'version'])
      .execute();
    // What is published today is its agent's current version.
    await sql`INSERT INTO agent_versions (agent_id, version, agent_spec, published_at)
      SELECT id, version, agent_spec, updated_at FROM agents WHERE agent_spec IS NOT NULL AND version > 0`.execute(db);
    await db.schema.alterTable('deployments').addColumn('agent_version', 'integer').execute();
    await db.schema.alterTable('conversations').addColumn('agent_version', 'integer').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('conversations').dropColumn('agent_version').execute();
    await db.schema.alterTable('deployments').dropColumn('agent_version').execute();
    await db.schema.dropTable('agent_versions').execute();
  },
};
