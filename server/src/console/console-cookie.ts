import { SESSION_ABSOLUTE_MS } from './console-accounts.js';

export const SESSION_COOKIE = 'concierge_session';
/** The header a console request must carry for its cookie to count: a cross-site form cannot set it, and a cross-site fetch that sets it needs a preflight nobody answers. */
export const CONSOLE_HEADER = { name: 'x-requested-with', value: 'concierge-console' };

/** HttpOnly, SameSite=Strict, the whole site, Secure behind https; lives as long as the session may. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_ABSOLUTE_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** What the browser keeps while it signs in with the identity provider: Lax, as the provider's redirect back is another site's. */
export const SSO_COOKIE = 'concierge_sso';
const SSO_COOKIE_S = 600;

export function ssoCookie(pending: string, secure: boolean): string {
  return `${SSO_COOKIE}=${pending}; HttpOnly; SameSite=Lax; Path=/console/sso; Max-Age=${SSO_COOKIE_S}${secure ? '; Secure' : ''}`;
}

export function clearedSsoCookie(secure: boolean): string {
  return `${SSO_COOKIE}=; HttpOnly; SameSite=Lax; Path=/console/sso; Max-Age=0${secure ? '; Secure' : ''}`;
}
