import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * The audit log (README, Your team): a record may say what a change was beside which fields it
 * touched (`detail`: an endpoint's origin before and after, how someone signed in; never a secret),
 * and SQLite keeps the table append-only as PostgreSQL does: UPDATE refused, DELETE refused but in
 * the retention purge's own transaction, which says so by a row in `audit_purge` it removes again.
 */
export const auditDetail: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('audit_log').addColumn('detail', 'text').execute();
    if (!onSqlite(db)) return;
    await db.schema
      .createTable('audit_purge')
      .addColumn('running', 'integer', (c) => c.notNull())
      .execute();
    await sql`
      CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
      BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: UPDATE refused'); END`.execute(db);
    await sql`
      CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
      WHEN NOT EXISTS (SELECT 1 FROM audit_purge)
      BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: DELETE refused'); END`.execute(db);
  },

  async down(db: Kysely<unknown>) {
    if (onSqlite(db)) {
      await sql`DROP TRIGGER IF EXISTS audit_log_no_delete`.execute(db);
      await sql`DROP TRIGGER IF EXISTS audit_log_no_update`.execute(db);
      await db.schema.dropTable('audit_purge').execute();
    }
    await db.schema.alterTable('audit_log').dropColumn('detail').execute();
  },
};

const onSqlite = (db: Kysely<unknown>): boolean => db.getExecutor().adapter instanceof SqliteAdapter;
