import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { createCustomer } from './customers/customer.service.js';
import { openStore } from './store/db.js';

const USAGE = 'usage: npm run admin -- create-customer --name NAME';

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { name: { type: 'string' } } });
  if (positionals[0] !== 'create-customer' || positionals.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const name = values.name?.trim();
  if (!name || name.length > 200) {
    process.stderr.write(`--name is required (1..200 characters)\n${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const { customerId, apiKey } = await createCustomer(store.db, name);
    process.stdout.write(`Customer: ${customerId}\nAPI key: ${apiKey}\n`);
  } finally {
    await store.close();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
