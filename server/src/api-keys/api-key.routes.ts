import { type RouteDef, defineRoute } from '../http/route.js';
import type { Db } from '../database.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import type { ApiKeyAuthenticator } from './api-key.authenticator.js';
import {
  apiKeySettingsSchema,
  rotateApiKeyBody,
  rotatedApiKeySchema,
  usageQuery,
  usageSchema,
} from './api-key.schemas.js';
import { getApiKeySettings, rotateApiKey } from './api-key.service.js';
import type { UsageRecorder } from './usage.recorder.js';
import { getUsage } from './usage.service.js';

export interface ApiKeyRouteDeps {
  db: Db;
  usage: UsageRecorder;
  keys: ApiKeyAuthenticator;
  trail: AuditTrail;
}

export function apiKeyRoutes({ db, usage, keys, trail }: ApiKeyRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/settings/api-key',
      operationId: 'getApiKey',
      summary: 'The current API key record (never the key itself)',
      tag: 'API key',
      success: { status: 200, description: 'The key record', data: apiKeySettingsSchema },
      handler: async ({ principal }) => ({ data: await getApiKeySettings(db, principal.customerId) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/settings/api-key/rotate',
      operationId: 'rotateApiKey',
      summary:
        'Issue a new API key; the old one works for grace_period_s (default 3600; 0: it fails at once). A JSON body is required (`{}` will do): a bare POST rotates nothing',
      tag: 'API key',
      body: rotateApiKeyBody,
      success: { status: 200, description: 'The new key, shown once', data: rotatedApiKeySchema },
      handler: async (ctx) => {
        const rotated = await rotateApiKey(db, ctx.principal.customerId, ctx.body.grace_period_s, trail.by(ctx));
        keys.forgetCustomer(ctx.principal.customerId);
        return { data: rotated };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/settings/api-key/usage',
      operationId: 'getApiKeyUsage',
      summary: "This customer's authenticated management requests per day and per route",
      tag: 'API key',
      query: usageQuery,
      success: { status: 200, description: 'Usage over the period', data: usageSchema },
      handler: async ({ principal, query }) => {
        await usage.flush();
        return { data: await getUsage(db, principal.customerId, query.days) };
      },
    }),
  ];
}
