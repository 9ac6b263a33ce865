// The console shows this on a deployment's page (console/src/pages/deployments.tsx); the package
// test (sdk/node/test/package.test.ts) runs it as shown, against the SDK installed from its tarball.

/**
 * The customer's server for one deployment, on the Node SDK this service serves (README, The
 * SDKs): its turn hook and its token endpoint, or the token endpoint alone for an agent that
 * answers on its own (`hook: false`).
 */
export function serverSnippetOf(baseUrl: string, deploymentId: string, { hook = true } = {}): string {
  return [
    `npm install ${baseUrl}/sdk/concierge-server.tgz`,
    '',
    `import { mintUserToken${hook ? ', nodeHandler' : ''} } from 'concierge-server';`,
    `const secret = process.env.SIGNING_SECRET;`,
    ...(hook
      ? [
          `// POST /hook: verified, run once per delivery. Return text, { reply_text, actions }, { handoff }, or yield parts.`,
          `export const hook = nodeHandler({ secrets: [secret], onTurn: async (turn) => \`You asked: \${turn.text}\` });`,
        ]
      : []),
    `// POST /your/token-endpoint: a token for the visitor your site knows.`,
    `export const tokenFor = (user) => mintUserToken({ deploymentId: '${deploymentId}', secret, sub: user.id, name: user.name });`,
  ].join('\n');
}
