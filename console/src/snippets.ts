import type { Delivery } from './types';

// What a customer copies: the widget's script tag, a server's reply, a signature checked by hand.

export { serverSnippetOf } from '../../sdk/node/examples/server-snippet';

/** What a customer pastes into their page. */
export function snippetOf(baseUrl: string, deploymentId: string): string {
  return `<script src="${baseUrl}/widget/concierge.js" data-deployment-id="${deploymentId}" data-token-url="/your/token-endpoint" async></script>`;
}

const header = (d: Delivery, name: string): string =>
  Object.entries(d.request.headers).find(([k]) => k.toLowerCase() === name)?.[1] ?? '';

/** The exact string a Standard Webhooks signature covers: `{webhook-id}.{webhook-timestamp}.{body}`. */
export function signedStringOf(d: Delivery): string {
  return `${header(d, 'webhook-id')}.${header(d, 'webhook-timestamp')}.${d.request.body}`;
}

/** How to check this delivery's signature yourself, with the Node SDK and with openssl anywhere. */
export function verificationSnippets(d: Delivery): { node: string; openssl: string } {
  const id = header(d, 'webhook-id');
  const ts = header(d, 'webhook-timestamp');
  return {
    node: [
      `import { verifyHook } from 'concierge-server';`,
      `// rawBody: the request's exact bytes; headers: the request's headers. Throws HookVerificationError.`,
      `const call = verifyHook(rawBody, headers, process.env.SIGNING_SECRET);`,
    ].join('\n'),
    openssl: [
      `# The key is the base64 after whsec_; compare with webhook-signature (after "v1,")`,
      `printf '%s' '${id}.${ts}.'"$BODY" \\`,
      `  | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf '%s' "\${SIGNING_SECRET#whsec_}" | base64 -d | xxd -p -c 256) -binary | base64`,
    ].join('\n'),
  };
}
