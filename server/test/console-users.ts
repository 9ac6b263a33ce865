import { expect } from 'vitest';
import { auditOf } from '../src/audit/audit-trail.js';
import type { Role } from '#protocol/roles';
import { call, type TestService } from './harness.js';

export const PASSWORD = 'correct horse battery';
/** The header the console sends with every management request (README, The console). */
export const CONSOLE = { 'x-requested-with': 'concierge-console' };
export const tokenOf = (setCookie: string | null): string =>
  /^concierge_session=([^;]*)/.exec(setCookie ?? '')?.[1] ?? '';

/** A console user of `customerId` with `role`, signed in: the headers their console's requests carry. */
export async function member(service: TestService, customerId: string, email: string, role: Role) {
  const { token, userId } = await service.app.consoleAccounts.invite(customerId, email, {
    role,
    audit: auditOf(customerId, 'admin'),
  });
  const welcome = await call(service.url, 'POST', '/console/welcome', { body: { token, password: PASSWORD } });
  expect(welcome.status).toBe(204);
  return { userId, headers: { cookie: `concierge_session=${tokenOf(welcome.headers.get('set-cookie'))}`, ...CONSOLE } };
}
