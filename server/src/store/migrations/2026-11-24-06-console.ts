import type { Kysely, Migration } from 'kysely';

/** Console accounts, their sessions and failed sign-ins (README, The console). */
export const consoleAccounts: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('console_users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text')
      .addColumn('welcome_hash', 'text', (c) => c.unique())
      .addColumn('welcome_expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_sign_in_at', 'text')
      .execute();
    await db.schema
      .createTable('console_sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('console_users.id').onDelete('cascade'))
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('console_sessions_expiry').on('console_sessions').column('expires_at').execute();
    // A new password ends the user's sessions.
    await db.schema.createIndex('console_sessions_user').on('console_sessions').column('user_id').execute();
    await db.schema
      .createTable('console_sign_in_failures')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('console_failures_email')
      .on('console_sign_in_failures')
      .columns(['email', 'at'])
      .execute();
    await db.schema
      .createIndex('console_failures_address')
      .on('console_sign_in_failures')
      .columns(['address', 'at'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    for (const table of ['console_sign_in_failures', 'console_sessions', 'console_users'])
      await db.schema.dropTable(table).ifExists().execute();
  },
};
