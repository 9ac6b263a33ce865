import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type RouteDef, defineRoute } from './http/route.js';
import { builtFile } from './shared/built-file.js';
import { PROJECT_ROOT } from './shared/project-root.js';

const SDK = join(PROJECT_ROOT, 'sdk', 'node');

/** Where `npm run build:sdk` packs the Node SDK: `npm pack`'s name for this version. */
export function sdkTarball(dir = SDK): string {
  const { name, version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  return join(dir, 'pack', `${name}-${version}.tgz`);
}

/**
 * `GET /sdk/concierge-server.tgz`: the Node SDK of this very service, as `npm pack` makes it, so a
 * customer's server installs it with `npm install {base}/sdk/concierge-server.tgz` (README, Your
 * first concierge) and always gets the version that matches the service it talks to.
 */
export function sdkRoute(file = sdkTarball()): RouteDef {
  const tarball = builtFile(file, 'The SDK is not packed: run `npm run build:sdk`');
  return defineRoute({
    method: 'get',
    path: '/sdk/concierge-server.tgz',
    operationId: 'nodeSdk',
    summary: "The Node SDK for the customer's server, as an npm tarball: npm install {base}/sdk/concierge-server.tgz",
    tag: 'SDK',
    auth: false,
    errors: ['not_found'],
    success: {
      status: 200,
      description: 'The package, gzipped tar as npm pack makes it',
      data: z.string(),
      contentType: 'application/gzip',
      headers: { 'Cache-Control': 'public, max-age=300' },
    },
    handler: async () => ({
      data: await tarball(),
      headers: { 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' },
    }),
  });
}
