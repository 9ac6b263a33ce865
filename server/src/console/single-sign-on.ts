import type * as Oidc from 'openid-client';

export interface SsoSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the sign-in page's button says: "Sign in with <name>". */
  name: string;
}

/**
 * The client library, loaded with the first sign-in that needs it: a service without single sign-on
 * (most) never loads it, and a start or restart does not wait for it.
 */
let library: Promise<typeof Oidc> | undefined;
const openIdClient = (): Promise<typeof Oidc> => (library ??= import('openid-client'));

/** What the browser keeps between the start and the callback: the PKCE verifier, the state, the nonce, and whether it links. */
interface Pending {
  verifier: string;
  state: string;
  nonce: string;
  /** Started by someone signed in, to link the provider to their account rather than to sign in. */
  link?: true;
}

/** Who an identity provider signed in (README, Your team): its subject, and the verified email it gave. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  email: string;
}

/** Why a sign-in with the identity provider was refused, as the sign-in page explains it. */
export type SsoRefusal = 'not_invited' | 'not_linked' | 'other_email' | 'unverified_email' | 'unavailable' | 'failed';

export class SsoRefused extends Error {
  constructor(
    readonly reason: SsoRefusal,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Single sign-on to the console (README, Your team): OpenID Connect's authorization code flow with
 * PKCE, through `openid-client` (certified by the OpenID Foundation). The ID token is verified with
 * the issuer's published keys, for this client, unexpired, with the nonce of this browser's start;
 * only a verified email is taken.
 */
export class SingleSignOn {
  #configuration: Promise<Oidc.Configuration> | undefined;

  constructor(
    private readonly settings: SsoSettings,
    /** Where the provider sends the browser back: the service's own public address. */
    private readonly callbackUrl: () => string,
  ) {}

  get name(): string {
    return this.settings.name;
  }

  /** The provider's address to send the browser to, and what the browser keeps until it comes back; `link` to link, not sign in. */
  async start(link = false): Promise<{ location: string; pending: string }> {
    const oidc = await openIdClient();
    const configuration = await this.#discovered();
    const pending: Pending = {
      verifier: oidc.randomPKCECodeVerifier(),
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      ...(link ? { link: true as const } : {}),
    };
    const location = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.callbackUrl(),
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { location: location.href, pending: Buffer.from(JSON.stringify(pending)).toString('base64url') };
  }

  /** Whom the provider signed in (its subject and verified email), from the callback's query and what the browser kept, and whether it was to link. */
  async finish(
    query: string,
    pendingCookie: string | undefined,
  ): Promise<{ identity: ProviderIdentity; link: boolean }> {
    const pending = pendingOf(pendingCookie);
    if (!pending)
      throw new SsoRefused('failed', 'The sign-in was not started in this browser, or took over 10 minutes');
    const oidc = await openIdClient();
    const configuration = await this.#discovered();
    let claims: Record<string, unknown> | undefined;
    let subject: { issuer: string; subject: string };
    try {
      const tokens = await oidc.authorizationCodeGrant(
        configuration,
        new URL(`${this.callbackUrl()}?${query}`),
        {
          pkceCodeVerifier: pending.verifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        },
        { redirect_uri: this.callbackUrl() },
      );
      const idToken = tokens.claims()!;
      // Kept as the configuration names it (no trailing slash): one provider, however its issuer is spelt.
      subject = { issuer: idToken.iss.replace(/\/+$/, ''), subject: idToken.sub };
      // Many providers put the email in the ID token; the others give it at their userinfo endpoint, for the same subject.
      claims =
        typeof idToken.email === 'string'
          ? idToken
          : { ...(await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub)) };
    } catch (err) {
      throw new SsoRefused('failed', `The identity provider's answer was refused: ${(err as Error).message}`);
    }
    const email = typeof claims?.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email) throw new SsoRefused('unverified_email', 'The identity provider gave no email address');
    if (claims?.email_verified !== true)
      throw new SsoRefused('unverified_email', 'The identity provider has not verified this email address');
    return { identity: { ...subject, email }, link: pending.link === true };
  }

  /** The provider's metadata and keys, read once; a failure is asked again next time. */
  #discovered(): Promise<Oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    this.#configuration ??= openIdClient()
      .then((oidc) =>
        oidc.discovery(
          new URL(issuer),
          clientId,
          clientSecret,
          undefined,
          // Plain http only for a provider on this machine (tests, a local one); anything else must be https.
          isLoopback(issuer) ? { execute: [oidc.allowInsecureRequests] } : undefined,
        ),
      )
      .catch((err: unknown) => {
        this.#configuration = undefined;
        throw new SsoRefused('unavailable', `The identity provider could not be reached: ${(err as Error).message}`);
      });
    return this.#configuration;
  }
}

function isLoopback(issuer: string): boolean {
  const { protocol, hostname } = new URL(issuer);
  return protocol === 'http:' && (hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]');
}

function pendingOf(cookie: string | undefined): Pending | undefined {
  if (!cookie) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cookie, 'base64url').toString('utf8')) as Partial<Pending>;
    const fine = [value.verifier, value.state, value.nonce].every((v) => typeof v === 'string' && v.length <= 200);
    return fine
      ? {
          verifier: value.verifier!,
          state: value.state!,
          nonce: value.nonce!,
          ...(value.link === true ? { link: true } : {}),
        }
      : undefined;
  } catch {
    return undefined;
  }
}
