// The console shows this on a deployment's page (console/src/pages/deployments.tsx); the package
// test (sdk/node/test/package.test.ts) runs it as shown, against the SDK installed from its tarball.

/** The customer's server for one deployment, on the Node SDK this service serves (README, The SDKs). */
export function serverSnippetOf(baseUrl: string, deploymentId: string): string {
  return [
    `npm install ${baseUrl}/sdk/concierge-server.tgz`,
    '',
    `import { mintUserToken, nodeHandler } from 'concierge-server';`,
    `const secret = process.env.SIGNING_SECRET;`,
    `// POST /hook: verified, run once per delivery. Return text, { reply_text, actions }, { handoff }, or yield parts.`,
    `export const hook = nodeHandler({ secrets: [secret], onTurn: async (turn) => \`You asked: \${turn.text}\` });`,
    `// POST /your/token-endpoint: a token for the visitor your site knows.`,
    `export const tokenFor = (user) => mintUserToken({ deploymentId: '${deploymentId}', secret, sub: user.id, name: user.name });`,
  ].join('\n');
}
