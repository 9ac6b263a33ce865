import { parseArgs } from 'node:util';
import { z } from 'zod';
import { type Config, ConfigError, loadConfig } from './config.js';
import { findUsersByEmail } from './console/console-account.repository.js';
import { ConsoleAccounts, EMAIL_ADDRESS, welcomeLink } from './console/console-accounts.js';
import { PasswordHasher } from './console/password-hasher.js';
import { createCustomer } from './customers/customer.service.js';
import { openStore, type Store } from './store/db.js';
import { backupSqlite, restoreSqlite } from './store/sqlite-backup.js';
import { auditOf, inTransaction } from './audit/audit-trail.js';
import { ModelEndpointService } from './model-endpoints/model-endpoint.service.js';
import { secretsKeys } from './shared/secrets-key.js';
import { localBaseUrl } from './http/public-address.js';
import { isRole, type Role, ROLES } from '#protocol/roles';

const USAGE = `usage:
  npm run admin -- create-customer --name NAME [--email EMAIL [--role ROLE]]
  npm run admin -- create-user --customer CUSTOMER_ID --email EMAIL [--role ROLE]
  npm run admin -- create-user --email EMAIL [--role ROLE]   (a fresh link for an existing user: a forgotten password)
  ROLE: owner (the default for a new user), admin, editor or agent (README, Your team)
  npm run admin -- backup --to FILE            (SQLite: a consistent copy while the service runs)
  npm run admin -- restore --from FILE         (SQLite: with the service stopped)
  npm run admin -- reseal-secrets              (after SECRETS_KEY changed, the old one in SECRETS_KEY_PREVIOUS)`;

class UsageError extends Error {}

/** Where the printed links point: PUBLIC_BASE_URL, else where the service itself links to on this machine. */
const baseUrlOf = (config: Config): string => config.publicBaseUrl ?? localBaseUrl(config.host, config.port);

function emailOf(value: string | undefined): string {
  const email = value?.trim().toLowerCase() ?? '';
  if (!EMAIL_ADDRESS.test(email)) throw new UsageError('--email must be an email address');
  return email;
}

function roleOf(value: string | undefined): Role | undefined {
  if (value === undefined) return undefined;
  if (!isRole(value)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  return value;
}

/** A one-time link for `email` (made their account if new, with `role`): recorded in the audit log as the admin command's. */
async function signInLink(
  store: Store,
  config: Config,
  customerId: string,
  email: string,
  role: Role | undefined,
): Promise<string> {
  const { token } = await new ConsoleAccounts({
    db: store.db,
    hasher: new PasswordHasher(),
    dialect: store.dialect,
  }).invite(customerId, email, { ...(role ? { role } : {}), audit: auditOf(customerId, 'admin') });
  return `Console sign-in: ${welcomeLink(baseUrlOf(config), token)}\n`;
}

/** Backups copy the SQLite file; PostgreSQL has its own tools for that. */
function sqliteStore(command: string): { dataDir: string; key: string | undefined } {
  const config = loadConfig();
  if (config.databaseUrl)
    throw new UsageError(
      `${command} copies the SQLite store; with DATABASE_URL set, use pg_dump and pg_restore (README, Running several nodes)`,
    );
  return { dataDir: config.dataDir, key: config.backupKey };
}

async function run(
  command: string,
  values: { name?: string; email?: string; customer?: string; role?: string; to?: string; from?: string },
): Promise<string> {
  if (command === 'backup') {
    if (!values.to) throw new UsageError('--to FILE is required');
    const { dataDir, key } = sqliteStore(command);
    const { bytes } = await backupSqlite(dataDir, values.to, { key });
    return `Backed up ${bytes} bytes to ${values.to} (its tag: ${values.to}.hmac; keep both)\n`;
  }
  if (command === 'restore') {
    if (!values.from) throw new UsageError('--from FILE is required');
    const { dataDir, key } = sqliteStore(command);
    await restoreSqlite(dataDir, values.from, { key });
    return `Restored ${values.from}; start the service to use it\n`;
  }
  if (command === 'reseal-secrets')
    return withStore(async (store, config) => {
      const endpoints = new ModelEndpointService({
        db: store.db,
        writes: inTransaction(store.db),
        keys: secretsKeys(config.dataDir, config.secretsKey, config.previousSecretsKeys),
      });
      const { resealed, unopened } = await endpoints.resealAll();
      const left = unopened
        ? `${unopened} could be opened by none of the keys given (SECRETS_KEY, SECRETS_KEY_PREVIOUS): their endpoints need their API keys again\n`
        : 'SECRETS_KEY_PREVIOUS may be removed now\n';
      return `Sealed ${resealed} secrets under the current SECRETS_KEY\n${left}`;
    });
  if (command === 'create-customer') {
    const name = values.name?.trim();
    if (!name || name.length > 200) throw new UsageError('--name is required (1..200 characters)');
    const email = values.email === undefined ? undefined : emailOf(values.email);
    const role = roleOf(values.role);
    return withStore(async (store, config) => {
      const { customerId, apiKey } = await createCustomer(store.db, name);
      const link = email ? await signInLink(store, config, customerId, email, role) : '';
      return `Customer: ${customerId}\nAPI key: ${apiKey}\n${link}`;
    });
  }
  if (command === 'create-user' && values.customer === undefined) {
    // Nobody remembers their customer's id: an existing user is found by address alone.
    const email = emailOf(values.email);
    const role = roleOf(values.role);
    return withStore(async (store, config) => {
      const [user, ...others] = await findUsersByEmail(store.db, email);
      if (!user)
        throw new UsageError(`${email} has no console account yet: name its customer with --customer CUSTOMER_ID`);
      if (others.length)
        throw new UsageError(
          `${email} is in ${others.length + 1} teams: name one with --customer (${[user, ...others].map((u) => u.customer_id).join(', ')})`,
        );
      return signInLink(store, config, user.customer_id, email, role);
    });
  }
  if (command === 'create-user') {
    const customerId = z.uuid().safeParse(values.customer);
    if (!customerId.success)
      throw new UsageError('--customer must be a customer id (the UUID create-customer printed)');
    const email = emailOf(values.email);
    const role = roleOf(values.role);
    return withStore(async (store, config) => {
      const known = await store.db
        .selectFrom('customers')
        .select('id')
        .where('id', '=', customerId.data)
        .executeTakeFirst();
      if (!known) throw new UsageError(`No customer ${customerId.data}`);
      return signInLink(store, config, customerId.data, email, role);
    });
  }
  throw new UsageError(`unknown command ${command}`);
}

async function withStore(work: (store: Store, config: Config) => Promise<string>): Promise<string> {
  const config = loadConfig();
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    return await work(store, config);
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<number> {
  try {
    const { positionals, values } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        email: { type: 'string' },
        customer: { type: 'string' },
        role: { type: 'string' },
        to: { type: 'string' },
        from: { type: 'string' },
      },
    });
    if (positionals.length !== 1) throw new UsageError('one command');
    process.stdout.write(await run(positionals[0]!, values));
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError) && !(err instanceof TypeError && 'code' in err)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(
      `${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  },
);
