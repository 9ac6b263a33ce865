import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * Single sign-on per customer (README, Your team): whether a customer takes it, and the email
 * domains the identity provider may sign in for it; each provider subject (`iss` + `sub`) linked to
 * the console users it signs in as, once. A console user's address is now unique within a
 * customer, not across customers: one person may be in several teams, and inviting an address
 * says nothing of other customers. On SQLite the table is made again to change its constraint,
 * which ends every console session once (everyone signs in again).
 */
export const singleSignOn: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('console_single_sign_on')
      .addColumn('customer_id', 'text', (c) => c.primaryKey().references('customers.id').onDelete('cascade'))
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('domains', 'text', (c) => c.notNull())
      .execute();
    if (onSqlite(db)) {
      await sql`CREATE TABLE console_users_next (
        id text PRIMARY KEY,
        customer_id text NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
        email text NOT NULL,
        password_hash text,
        welcome_hash text UNIQUE,
        welcome_expires_at text,
        created_at text NOT NULL,
        last_sign_in_at text,
        role text NOT NULL DEFAULT 'owner',
        UNIQUE (customer_id, email)
      )`.execute(db);
      await sql`INSERT INTO console_users_next
        SELECT id, customer_id, email, password_hash, welcome_hash, welcome_expires_at, created_at, last_sign_in_at, role
        FROM console_users`.execute(db);
      await sql`DROP TABLE console_users`.execute(db);
      await sql`ALTER TABLE console_users_next RENAME TO console_users`.execute(db);
    } else {
      await sql`ALTER TABLE console_users DROP CONSTRAINT console_users_email_key`.execute(db);
      await sql`ALTER TABLE console_users ADD CONSTRAINT console_users_customer_email UNIQUE (customer_id, email)`.execute(
        db,
      );
    }
    await db.schema.createIndex('console_users_email').on('console_users').column('email').execute();
    await db.schema
      .createTable('console_identities')
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('console_users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('console_identities_pk', ['issuer', 'subject', 'user_id'])
      .execute();
    await db.schema.createIndex('console_identities_user').on('console_identities').column('user_id').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('console_identities').execute();
    await db.schema.dropIndex('console_users_email').execute();
    await db.schema.dropTable('console_single_sign_on').execute();
  },
};

const onSqlite = (db: Kysely<unknown>): boolean => db.getExecutor().adapter instanceof SqliteAdapter;
