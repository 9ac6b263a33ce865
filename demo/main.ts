import { startDemo } from './customer-server.js';

/**
 * The demo on its own, against a running service:
 * `SERVICE_URL=http://127.0.0.1:8787 DEMO_API_KEY=vak_... tsx demo/main.ts`
 * (also `DEMO_PORT`, `DEMO_STATE`: a file to keep its deployment in, `DEMO_TOKEN_TTL_S`, and
 * `DEMO_PUBLIC_SERVICE_URL`: where browsers reach the service, when a proxy stands in front of it).
 */
const env = process.env;
if (!env.SERVICE_URL || !env.DEMO_API_KEY) {
  process.stderr.write('demo: SERVICE_URL and DEMO_API_KEY are required\n');
  process.exit(2);
}
const demo = await startDemo({
  serviceUrl: env.SERVICE_URL.replace(/\/$/, ''),
  ...(env.DEMO_PUBLIC_SERVICE_URL ? { publicServiceUrl: env.DEMO_PUBLIC_SERVICE_URL.replace(/\/$/, '') } : {}),
  apiKey: env.DEMO_API_KEY,
  port: Number(env.DEMO_PORT ?? 8788),
  host: env.HOST ?? '127.0.0.1',
  ...(env.DEMO_STATE ? { statePath: env.DEMO_STATE } : {}),
  ...(env.DEMO_TOKEN_TTL_S ? { tokenTtlS: Number(env.DEMO_TOKEN_TTL_S) } : {}),
});
process.stdout.write(`Demo at ${demo.url}\n`);
const stop = () => void demo.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
