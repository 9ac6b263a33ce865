import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from '../../../server/test/harness.js';
import { serverSnippetOf } from '../examples/server-snippet.js';
import { generateTypes } from '../scripts/generate-types.js';

const PACKAGE = join(import.meta.dirname, '..');

/** Standard Webhooks headers as the service sends them, written out for the scripts run in a project of their own. */
const STANDARD_SIGNER = `import { createHmac } from 'node:crypto';
const standardHeaders = (secret, body) => {
  const id = 'msg_1', at = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(id + '.' + at + '.' + body).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': at, 'webhook-signature': 'v1,' + signature };
};`;

describe('the Node SDK as a package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-sdk-pack-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("has the types of the service's calls as its OpenAPI `webhooks` says them (npm run sdk:types writes them)", () => {
    expect(readFileSync(join(PACKAGE, 'src', 'events.ts'), 'utf8')).toBe(generateTypes());
  });

  it('packs into a tarball with no dependency, which the service serves and a project of its own installs and runs, with its types', async () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
    expect(manifest.dependencies).toBeUndefined();
    execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: PACKAGE, stdio: 'pipe' });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    expect(tarball).toBe(`concierge-server-${manifest.version}.tgz`);
    const files = execFileSync('tar', ['-tzf', join(dir, tarball)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/events.d.ts',
        'package/README.md',
        'package/package.json',
      ]),
    );
    expect(
      files.filter((f) => !f.startsWith('package/dist/') && !['package/README.md', 'package/package.json'].includes(f)),
    ).toEqual([]);

    const project = join(dir, 'project');
    execFileSync('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'customer', private: true, type: 'module' }));
    // As the README's walkthrough installs it: from the service, which serves what `npm run build:sdk` packed.
    const service = await startService('sqlite');
    try {
      const served = await fetch(`${service.url}/sdk/concierge-server.tgz`);
      expect([served.status, served.headers.get('content-type')]).toEqual([200, 'application/gzip']);
      expect(Buffer.from(await served.arrayBuffer()).length).toBeGreaterThan(1000);
      // Not execFileSync: the service answering npm runs in this very process.
      await promisify(execFile)(
        'npm',
        ['install', '--no-audit', '--no-fund', `${service.url}/sdk/concierge-server.tgz`],
        { cwd: project },
      );
    } finally {
      await service.close();
    }
    writeFileSync(
      join(project, 'check.mjs'),
      `import { mintUserToken, verifyHook, ConciergeClient, nodeHandler, fetchHandler } from 'concierge-server';
${STANDARD_SIGNER}
const secret = 'whsec_' + Buffer.alloc(30, 6).toString('base64');
const body = JSON.stringify({ id: 'evt_1', type: 'conversation.ended', created_at: new Date().toISOString(), deployment_id: 'd', conversation_id: 'c', data: { reason: 'user_ended' } });
const event = verifyHook(body, standardHeaders(secret, body), secret);
console.log(event.type, mintUserToken({ deploymentId: 'd', secret, sub: 's' }).split('.').length, typeof ConciergeClient, typeof nodeHandler, typeof fetchHandler);`,
    );
    expect(execFileSync(process.execPath, ['check.mjs'], { cwd: project, encoding: 'utf8' }).trim()).toBe(
      'conversation.ended 3 function function function',
    );
    // The console's "Your server (Node)" for a deployment runs as shown: its hook answers a signed turn, its tokens are JWTs.
    writeFileSync(
      join(project, 'server.mjs'),
      serverSnippetOf('http://unused', 'dep-1').split('\n').slice(2).join('\n'),
    );
    writeFileSync(
      join(project, 'snippet.mjs'),
      `import { createServer } from 'node:http';
import { hook, tokenFor } from './server.mjs';
${STANDARD_SIGNER}
const server = createServer(hook).listen(0, '127.0.0.1', async () => {
  const body = JSON.stringify({ type: 'turn.created', delivery_id: 'x1', sent_at: new Date().toISOString(), deployment_id: 'dep-1', agent_id: 'a', conversation_id: 'c', turn_id: 't', user: { sub: 'u', name: null, ctx: null }, text: 'Hi', mode: 'text', language: 'en', reply_url: 'http://unused/replies' });
  const res = await fetch('http://127.0.0.1:' + server.address().port, { method: 'POST', body, headers: standardHeaders(process.env.SIGNING_SECRET, body) });
  console.log(res.status, (await res.json()).reply_text, tokenFor({ id: 'u1', name: 'Ana' }).split('.').length);
  server.close();
});`,
    );
    const snippet = execFileSync(process.execPath, ['snippet.mjs'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, SIGNING_SECRET: 'whsec_' + Buffer.alloc(30, 8).toString('base64') },
    });
    expect(snippet.trim()).toBe('200 You asked: Hi 3');
    // For an agent that answers on its own, the token endpoint alone, which runs as shown too.
    writeFileSync(
      join(project, 'tokens.mjs'),
      serverSnippetOf('http://unused', 'dep-1', { hook: false }).split('\n').slice(2).join('\n'),
    );
    writeFileSync(
      join(project, 'tokens-check.mjs'),
      `import * as server from './tokens.mjs';\nconsole.log(Object.keys(server).join(','), server.tokenFor({ id: 'u1', name: 'Ana' }).split('.').length);`,
    );
    const tokensOnly = execFileSync(process.execPath, ['tokens-check.mjs'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, SIGNING_SECRET: 'whsec_' + Buffer.alloc(30, 8).toString('base64') },
    });
    expect(tokensOnly.trim()).toBe('tokenFor 3');
    const types = readFileSync(join(project, 'node_modules', 'concierge-server', 'dist', 'index.d.ts'), 'utf8');
    expect(types).toContain('verifyHook');
  }, 60_000);
});
