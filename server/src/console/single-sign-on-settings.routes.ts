import { z } from 'zod';
import { auditEntry, type AuditTrail, recorded, type Writes } from '../audit/audit-trail.js';
import type { Db } from '../database.js';
import { type RouteDef, defineRoute } from '../http/route.js';
import { setSingleSignOn, type SingleSignOnSettings, singleSignOnOf } from './single-sign-on.repository.js';

/** A domain as an email address ends: labels of letters, digits and hyphens, lower case. */
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .refine(
    (name) => name.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label)),
    'must be an email domain such as example.com',
  );

export const singleSignOnSettingsSchema = z
  .object({
    enabled: z
      .boolean()
      .meta({ description: 'Whether the identity provider (OIDC_ISSUER) signs people in to this team' }),
    domains: z.array(z.string()).meta({ description: 'The email domains it may sign in for this team' }),
    provider: z
      .string()
      .nullable()
      .meta({ description: "The service's identity provider, as its button names it; null when it has none" }),
  })
  .meta({ id: 'SingleSignOnSettings' });

const settingsBody = z
  .strictObject({
    enabled: z.boolean(),
    domains: z.array(domain).max(20).default([]),
  })
  .refine((s) => !s.enabled || s.domains.length > 0, {
    message: 'name at least one email domain the identity provider may sign in for',
    path: ['domains'],
  })
  .meta({ id: 'UpdateSingleSignOnSettings' });

/**
 * Whether a customer's console takes single sign-on (README, Your team): off until an owner turns
 * it on for the email domains that are theirs. The identity provider serves the whole service; a
 * customer's switch and domains decide whom it may sign in to that customer's team.
 */
export function singleSignOnRoutes(parts: {
  db: Db;
  writes: Writes;
  trail: AuditTrail;
  provider: string | undefined;
}): RouteDef[] {
  const { db, writes, trail, provider } = parts;
  const shown = (settings: SingleSignOnSettings) => ({ ...settings, provider: provider ?? null });
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/settings/single-sign-on',
      operationId: 'getSingleSignOn',
      summary: "Whether this team's console takes single sign-on, and for which email domains",
      tag: 'Users',
      success: { status: 200, description: 'The settings', data: singleSignOnSettingsSchema },
      handler: async ({ principal }) => ({ data: shown(await singleSignOnOf(db, principal.customerId)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/settings/single-sign-on',
      operationId: 'updateSingleSignOn',
      summary:
        "Turn single sign-on on for the team's email domains, or off (owners only): people of those domains sign in with the service's identity provider once invited, or once linked from a password sign-in",
      tag: 'Users',
      body: settingsBody,
      success: { status: 200, description: 'The settings', data: singleSignOnSettingsSchema },
      handler: async (ctx) => {
        const settings = { enabled: ctx.body.enabled, domains: [...new Set(ctx.body.domains)] };
        const entry = auditEntry('customer.single_sign_on_changed', ctx.principal.customerId, {
          changes: ['enabled', 'domains'],
          detail: { enabled: settings.enabled, domains: settings.domains.join(' ') },
        });
        await recorded(writes, trail.by(ctx), entry, (trx) => setSingleSignOn(trx, ctx.principal.customerId, settings));
        return { data: shown(settings) };
      },
    }),
  ];
}
