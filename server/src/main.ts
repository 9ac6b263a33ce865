import pino from 'pino';
import { type App, createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { welcomeLink } from './console/console-accounts.js';
import { bootstrapCustomer } from './customers/customer.service.js';
import { createLogger } from './logger.js';
import { NO_NEW_KEY, nextSteps } from './start-notice.js';
import { holdStore } from './store/sqlite-backup.js';
import { localBaseUrl } from './http/public-address.js';
import { auditOf } from './audit/audit-trail.js';

/** The first customer's console user, created with it on an empty store. */
const OWNER_EMAIL = 'owner@localhost';

async function main(): Promise<void> {
  const config = loadConfig();
  // Asynchronous: lines written while a write is in flight go out together, instead of one
  // blocking write per request line (a fifth of a list request's time at info level).
  const logOut = pino.destination({ dest: 1, sync: false });
  const logger = createLogger(config.logLevel, logOut);
  const app = await createApp({ config, logger });
  // A SQLite store is marked as held while this process runs, so a restore refuses to replace it.
  const release = config.databaseUrl ? () => {} : holdStore(config.dataDir);
  const exit = (code: number): never => {
    release();
    logOut.flushSync();
    process.exit(code);
  };
  const url = await listenOrExplain(app, config.port, exit);
  // Before the Listening line: whoever waits for it may signal at once.
  let stopping = false;
  let endDrain = () => {};
  const stop = async (signal: string, drainSeconds: number) => {
    if (stopping) return endDrain();
    stopping = true;
    if (drainSeconds > 0) {
      // The balancer's health check sees 503 and stops sending new work here while everything
      // already here keeps being served; a second signal cuts the wait short.
      app.drain();
      logger.info({ signal, drainSeconds }, 'draining');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainSeconds * 1000);
        endDrain = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  // SIGTERM is how a supervisor or a rolling restart stops a node; Ctrl-C at a terminal stops at once.
  process.on('SIGTERM', () => void stop('SIGTERM', config.drainSeconds));
  process.on('SIGINT', () => void stop('SIGINT', 0));
  // After listening: a key created for a start that then fails would never be shown.
  const bootstrap = await bootstrapCustomer(app.store.db);
  const base = config.publicBaseUrl ?? localBaseUrl(config.host, Number(new URL(url).port));
  // Plain lines on stdout whatever the log level: scripts and people wait for them.
  process.stdout.write(`Listening on ${url}\nConsole at ${base}/console/\n`);
  if (bootstrap) {
    // The key first: it exists from here on and is never shown again, whatever happens next.
    process.stdout.write(`API key: ${bootstrap.apiKey}\n`);
    const { token } = await app.consoleAccounts.invite(bootstrap.customerId, OWNER_EMAIL, {
      role: 'owner',
      audit: auditOf(bootstrap.customerId, 'service'),
    });
    process.stdout.write(`Console sign-in: ${welcomeLink(base, token)}\n`);
  } else process.stdout.write(`${NO_NEW_KEY}\n`);
  // `npm start` says what to do next itself, with the demo's address in it.
  if (!process.argv.includes('--no-next-steps'))
    process.stdout.write(nextSteps({ url: base, firstStart: !!bootstrap }));
  logger.info({ store: app.store.location }, 'service started');
}

/** A busy port is a setting to change, said in one line, not a stack trace. */
async function listenOrExplain(app: App, port: number, exit: (code: number) => never): Promise<string> {
  try {
    return await app.listen();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    process.stderr.write(
      `Port ${port} is already in use: stop what holds it, or set PORT to a free port (PORT=0 picks one).\n`,
    );
    await app.store.close();
    return exit(1);
  }
}

main().catch((err) => {
  process.stderr.write(
    `${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
