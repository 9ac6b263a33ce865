import type { Credential } from '../http/auth.js';
import { readCookie } from '../http/cookies.js';
import type { RouteRequest } from '../http/exchange.js';
import type { PublicAddress } from '../http/public-address.js';
import type { ConsoleAccounts } from './console-accounts.js';
import { CONSOLE_HEADER, SESSION_COOKIE } from './console-cookie.js';

/**
 * GETs an EventSource makes, which cannot carry the console's header: their cookie counts without
 * it (a read, SameSite=Strict, and the origin rule below still applies).
 */
const EVENT_STREAMS = new Set(['/api/v1/activity']);

/**
 * The console's session cookie stands in for a key only on a request the console itself made:
 * with its header, and from the service's own origin when the browser says where it comes from.
 * Anything else is as if there were no cookie.
 */
export function consoleSession(accounts: ConsoleAccounts, address: PublicAddress): Credential {
  return {
    carried: (req) => readCookie(req, SESSION_COOKIE) !== undefined,
    async identify(req) {
      const token = readCookie(req, SESSION_COOKIE)!;
      if (!fromTheConsole(req, address)) return null;
      const who = await accounts.identify(token);
      return who && { customerId: who.customerId, keyId: null, userId: who.userId, email: who.email, role: who.role };
    },
    holds: (req) => accounts.holds(readCookie(req, SESSION_COOKIE)!),
  };
}

function fromTheConsole(req: RouteRequest, address: PublicAddress): boolean {
  const eventStream = req.method === 'GET' && EVENT_STREAMS.has((req.url ?? '').split('?', 1)[0]!);
  if (!eventStream && req.headers[CONSOLE_HEADER.name] !== CONSOLE_HEADER.value) return false;
  return req.headers.origin === undefined || req.headers.origin === address.originFor(req);
}
