import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * A team in one console (README, Your team): each console user's role (everyone who signed in
 * before roles existed could do everything, so they are owners), and the audit log, which
 * PostgreSQL keeps append-only: no UPDATE ever, and a DELETE only from the retention purge, which
 * says so for its own transaction.
 */
export const teams: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('console_users')
      .addColumn('role', 'text', (c) => c.notNull().defaultTo('owner'))
      .execute();
    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text')
      .addColumn('actor_email', 'text')
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target_type', 'text', (c) => c.notNull())
      .addColumn('target_id', 'text')
      .addColumn('changes', 'text', (c) => c.notNull())
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('request_id', 'text')
      .execute();
    await db.schema.createIndex('audit_log_customer_at').on('audit_log').columns(['customer_id', 'at', 'id']).execute();
    await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
    if (onPostgres(db)) {
      await sql`
        create function audit_log_append_only() returns trigger language plpgsql as $$
        begin
          if tg_op = 'DELETE' and current_setting('concierge.audit_purge', true) = 'on' then
            return old;
          end if;
          raise exception 'audit_log is append-only: % refused', tg_op;
        end
        $$`.execute(db);
      await sql`
        create trigger audit_log_append_only before update or delete on audit_log
        for each row execute function audit_log_append_only()`.execute(db);
    }
  },

  async down(db: Kysely<unknown>) {
    if (onPostgres(db)) await sql`drop function if exists audit_log_append_only() cascade`.execute(db);
    await db.schema.dropTable('audit_log').execute();
    await db.schema.alterTable('console_users').dropColumn('role').execute();
  },
};

const onPostgres = (db: Kysely<unknown>): boolean => !(db.getExecutor().adapter instanceof SqliteAdapter);
