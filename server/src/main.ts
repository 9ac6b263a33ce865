import pino from 'pino';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { welcomeLink } from './console/console-accounts.js';
import { bootstrapCustomer } from './customers/customer.service.js';
import { createLogger } from './logger.js';

/** The first customer's console user, created with it on an empty store. */
const OWNER_EMAIL = 'owner@localhost';

async function main(): Promise<void> {
  const config = loadConfig();
  // Asynchronous: lines written while a write is in flight go out together, instead of one
  // blocking write per request line (a fifth of a list request's time at info level).
  const logOut = pino.destination({ dest: 1, sync: false });
  const exit = (code: number) => {
    logOut.flushSync();
    process.exit(code);
  };
  const logger = createLogger(config.logLevel, logOut);
  const app = await createApp({ config, logger });
  const bootstrap = await bootstrapCustomer(app.store.db);
  const url = await app.listen();
  logger.info({ store: app.store.location }, 'service started');
  // Plain lines on stdout whatever the log level: scripts and people wait for them.
  process.stdout.write(`Listening on ${url}\nConsole at ${config.publicBaseUrl ?? url}/console/\n`);
  if (bootstrap) {
    // The key first: it exists from here on and is never shown again, whatever happens next.
    process.stdout.write(`API key: ${bootstrap.apiKey}\n`);
    const { token } = await app.consoleAccounts.invite(bootstrap.customerId, OWNER_EMAIL);
    process.stdout.write(`Console sign-in: ${welcomeLink(config.publicBaseUrl ?? url, token)}\n`);
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
