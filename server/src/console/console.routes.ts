import { z } from 'zod';
import { ROLES } from '#protocol/roles';
import type { AuditTrail } from '../audit/audit-trail.js';
import { clientAddress, type ProxyTrust } from '../http/client-address.js';
import { readCookie } from '../http/cookies.js';
import { clearedSessionCookie, SESSION_COOKIE, sessionCookie } from './console-cookie.js';
import type { PublicAddress } from '../http/public-address.js';
import { type RouteDef, defineRoute } from '../http/route.js';
import { type ConsoleAccounts, MIN_PASSWORD_LENGTH } from './console-accounts.js';

export interface ConsoleRouteDeps {
  accounts: ConsoleAccounts;
  /** A chosen password is recorded in the audit log as its user's. */
  trail: AuditTrail;
  /** The cookie gets `Secure` when the service is reached over https. */
  address: PublicAddress;
  trustProxy: ProxyTrust;
}

const password = z.string().max(1024);
const signInBody = z.strictObject({ email: z.string().min(1).max(320), password: password.min(1) });
const welcomeBody = z.strictObject({
  token: z.string().min(1).max(200),
  password: password.min(MIN_PASSWORD_LENGTH, `The password must have at least ${MIN_PASSWORD_LENGTH} characters`),
});
/** A console user as README, The console describes one. */
export const consoleUserSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    created_at: z.iso.datetime(),
    last_sign_in_at: z.iso.datetime().nullable(),
    role: z.enum(ROLES).meta({ description: 'What they may do (README, Your team): the console offers only that' }),
    single_sign_on: z.enum(['linked', 'linkable', 'off']).meta({
      description:
        'Whether the identity provider signs them in: `linked`; `linkable` (their team takes it for their domain: sign in with it once while signed in here); `off`',
    }),
  })
  .nullable()
  .meta({ id: 'ConsoleUser' });
const cookieHeader = {
  'Set-Cookie': 'concierge_session: HttpOnly, SameSite=Strict, Path=/ (Secure over https); 12 h absolute, 2 h idle',
};

/** Sign-in, sign-out and the welcome link's first password (README, The console). */
export function consoleRoutes({ accounts, trail, address, trustProxy }: ConsoleRouteDeps): RouteDef[] {
  const secure = address.https;
  const signedIn = (token: string) => ({ data: null, headers: { 'Set-Cookie': sessionCookie(token, secure) } });
  return [
    defineRoute({
      method: 'post',
      path: '/console/session',
      operationId: 'signIn',
      summary:
        'Sign in to the console; at most 10 failures per email and per address (IPv6: per /56) in 15 minutes; 429 too when too many sign-ins wait for a password check',
      tag: 'Console',
      auth: false,
      body: signInBody,
      errors: ['unauthorized', 'rate_limited'],
      success: {
        status: 204,
        description: 'Signed in: the session cookie is set',
        data: z.null(),
        empty: true,
        headers: cookieHeader,
      },
      handler: async ({ body, req, res }) =>
        signedIn(
          await accounts.signIn(body.email, body.password, clientAddress(req, trustProxy), trail.signingIn(req, res)),
        ),
    }),
    defineRoute({
      method: 'get',
      path: '/console/session',
      operationId: 'currentSession',
      summary: 'Who is signed in: the user, or null (200 either way, so a page can ask without an error)',
      tag: 'Console',
      auth: false,
      success: {
        status: 200,
        description: 'The signed-in user, or null',
        data: consoleUserSchema,
      },
      handler: async ({ req }) => {
        const token = readCookie(req, SESSION_COOKIE);
        return { data: token ? await accounts.whoIs(token) : null };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/console/session',
      operationId: 'signOut',
      summary: 'Sign out: the session ends on the server and the cookie is cleared',
      tag: 'Console',
      auth: false,
      success: {
        status: 204,
        description: 'Signed out',
        data: z.null(),
        empty: true,
        headers: { 'Set-Cookie': 'concierge_session, cleared' },
      },
      handler: async ({ req }) => {
        const token = readCookie(req, SESSION_COOKIE);
        if (token) await accounts.signOut(token);
        return { data: null, headers: { 'Set-Cookie': clearedSessionCookie(secure) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/console/welcome',
      operationId: 'welcome',
      summary: 'Choose a password with a one-time welcome link (24 h) and sign in',
      tag: 'Console',
      auth: false,
      body: welcomeBody,
      // 429 when the password-hashing queue is full.
      errors: ['unauthorized', 'rate_limited'],
      success: {
        status: 204,
        description: 'Password set and signed in: the session cookie is set',
        data: z.null(),
        empty: true,
        headers: cookieHeader,
      },
      handler: async ({ body, req, res }) =>
        signedIn(await accounts.welcome(body.token, body.password, trail.signingIn(req, res))),
    }),
  ];
}
