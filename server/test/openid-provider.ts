import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/** The console's client at the provider: OIDC_CLIENT_ID and OIDC_CLIENT_SECRET. */
export const CLIENT = { id: 'concierge-console', secret: 'a-client-secret-for-the-console-0123456789' };

interface Person {
  email: string;
  verified: boolean;
}

/**
 * A real OpenID Provider (`oidc-provider`, certified by the OpenID Foundation) on a random port:
 * whoever `signIn` names signs in at its interaction step, and `tamper` may re-sign the ID token it
 * issues with its own key (a provider that lies about the audience or the expiry).
 */
export async function openIdProvider() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'op-key', alg: 'RS256', use: 'sig' };
  const state: {
    people: Record<string, Person>;
    signIn: string;
    tamper: ((claims: Record<string, unknown>) => Record<string, unknown>) | undefined;
  } = { people: {}, signIn: '', tamper: undefined };
  let provider: Provider | undefined;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (!provider) return void res.writeHead(503).end();
    if (req.url?.startsWith('/interaction/')) return void finishInteraction(provider, req, res, state.signIn);
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    state,
    /** Starts answering, for a console whose way back is `callback`. */
    serve(callback: string) {
      provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT.id,
            client_secret: CLIENT.secret,
            redirect_uris: [callback],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        jwks: { keys: [jwk] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        findAccount: (_ctx, id) => ({
          accountId: id,
          claims: () => ({ sub: id, email: state.people[id]!.email, email_verified: state.people[id]!.verified }),
        }),
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        features: { devInteractions: { enabled: false } },
        cookies: { keys: ['op-cookie-key-for-tests'] },
        ttl: { AccessToken: 600, IdToken: 600, Grant: 600, Interaction: 600, Session: 600 },
      });
      provider.use(async (ctx, next) => {
        await next();
        const body = ctx.body as { id_token?: string } | undefined;
        if (ctx.path === '/token' && state.tamper && body?.id_token)
          body.id_token = await new SignJWT(state.tamper(decodeJwt(body.id_token)))
            .setProtectedHeader({ alg: 'RS256', kid: 'op-key' })
            .sign(privateKey);
      });
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The person signs in and consents at once: a grant for the console's scopes. */
async function finishInteraction(provider: Provider, req: IncomingMessage, res: ServerResponse, accountId: string) {
  const details = await provider.interactionDetails(req, res);
  const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  grant.addOIDCScope('openid email');
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId }, consent: { grantId: await grant.save() } },
    { mergeWithLastSubmission: false },
  );
}
