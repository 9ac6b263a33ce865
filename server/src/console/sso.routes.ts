import type { Logger } from 'pino';
import { z } from 'zod';
import type { AuditTrail } from '../audit/audit-trail.js';
import { AppError } from '../errors.js';
import { readCookie } from '../http/cookies.js';
import type { PublicAddress } from '../http/public-address.js';
import { defineRoute, type RouteDef, type RouteResult } from '../http/route.js';
import type { ConsoleAccounts } from './console-accounts.js';
import { clearedSsoCookie, SESSION_COOKIE, SSO_COOKIE, sessionCookie, ssoCookie } from './console-cookie.js';
import { type SingleSignOn, SsoRefused } from './single-sign-on.js';

/** Where the console shows why a sign-in with the identity provider was refused. */
const refusedAt = (reason: string) => `/console/#/sign-in/${reason}`;
const REFUSED_AT = '/console/#/sign-in/{not_invited|not_linked|other_email|unverified_email|unavailable|failed}';

/** Single sign-on to the console (README, Your team): whether it is offered, its start, and the provider's way back. */
export function ssoRoutes(parts: {
  sso: SingleSignOn | undefined;
  accounts: ConsoleAccounts;
  trail: AuditTrail;
  address: PublicAddress;
  /** Why a sign-in was refused: the person sees the reason, the operator setting it up the detail. */
  logger: Logger;
}): RouteDef[] {
  const { sso, accounts, trail, address, logger } = parts;
  const secure = address.https;
  const redirect = { Location: 'Where the browser goes next' };
  /** A refusal sends the browser back to the sign-in page, which says why in words. */
  const refusing = async (signIn: () => Promise<RouteResult>): Promise<RouteResult> => {
    try {
      return await signIn();
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      logger.warn({ reason: err.reason, detail: err.message }, 'single sign-on refused');
      return { data: null, headers: { Location: refusedAt(err.reason), 'Set-Cookie': clearedSsoCookie(secure) } };
    }
  };
  return [
    defineRoute({
      method: 'get',
      path: '/console/sso',
      operationId: 'singleSignOn',
      summary: 'Whether the console offers single sign-on (OIDC_ISSUER), and the name its button shows',
      tag: 'Console',
      auth: false,
      success: {
        status: 200,
        description: 'Offered or not',
        data: z.object({ enabled: z.boolean(), name: z.string().nullable() }).meta({ id: 'SingleSignOn' }),
      },
      handler: () => ({ data: { enabled: sso !== undefined, name: sso?.name ?? null } }),
    }),
    defineRoute({
      method: 'get',
      path: '/console/sso/start',
      operationId: 'startSingleSignOn',
      summary:
        'Sends the browser to the identity provider (authorization code with PKCE); what it must bring back is kept in an HttpOnly cookie for 10 minutes. With `link=1`, a signed-in user links the provider to their account instead (their team must take single sign-on for their domain). 404 when single sign-on is not configured; when the provider cannot be reached, back to the sign-in page (`unavailable`)',
      tag: 'Console',
      auth: false,
      query: z.object({
        link: z.enum(['1']).optional().meta({ description: 'Link the provider to the signed-in account, not sign in' }),
      }),
      errors: ['not_found'],
      success: {
        status: 302,
        description: `To the identity provider's sign-in; or, when it cannot be reached, to ${REFUSED_AT}`,
        data: z.null(),
        empty: true,
        headers: { ...redirect, 'Set-Cookie': 'concierge_sso: HttpOnly, SameSite=Lax, Path=/console/sso, 10 minutes' },
      },
      handler: async ({ query }) => {
        if (!sso) throw notConfigured();
        return refusing(async () => {
          const { location, pending } = await sso.start(query.link === '1');
          return { data: null, headers: { Location: location, 'Set-Cookie': ssoCookie(pending, secure) } };
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/console/sso/callback',
      operationId: 'finishSingleSignOn',
      summary:
        "The identity provider's way back: the ID token is verified (the issuer's keys, this client, unexpired, the nonce); in a team that takes single sign-on for the email's domain, the console user the subject is linked to, or a standing invitation of that verified email (linked from then on), is signed in; anyone else goes back to the sign-in page, told why. A link started by a signed-in user links the subject to them",
      tag: 'Console',
      auth: false,
      errors: ['not_found'],
      success: {
        status: 302,
        description: `Signed in: to the console, with its session cookie. Refused: to ${REFUSED_AT}`,
        data: z.null(),
        empty: true,
        headers: { ...redirect, 'Set-Cookie': 'concierge_session when signed in' },
      },
      handler: async ({ req, res }) => {
        if (!sso) throw notConfigured();
        const query = (req.url ?? '').split('?').slice(1).join('?');
        return refusing(async () => {
          const { identity, link } = await sso.finish(query, readCookie(req, SSO_COOKIE));
          if (link) {
            await accounts.linkProvider(readCookie(req, SESSION_COOKIE) ?? '', identity, trail.signingIn(req, res));
            return { data: null, headers: { Location: '/console/#/', 'Set-Cookie': clearedSsoCookie(secure) } };
          }
          const token = await accounts.signInWithProvider(identity, trail.signingIn(req, res));
          return { data: null, headers: { Location: '/console/#/', 'Set-Cookie': sessionCookie(token, secure) } };
        });
      },
    }),
  ];
}

const notConfigured = () => new AppError('not_found', 'Single sign-on is not configured here (OIDC_ISSUER)');
