import { z } from 'zod';
import { timestamp } from '../shared/schemas.js';

export const apiKeySettingsSchema = z
  .object({
    id: z.uuid(),
    prefix: z.string().meta({ description: 'The first 8 characters of the key' }),
    last4: z.string(),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
    previous_key_expires_at: timestamp.nullable().meta({ description: 'Until then the previous key still works' }),
  })
  .meta({ id: 'ApiKeySettings' });

export const rotatedApiKeySchema = apiKeySettingsSchema
  .extend({ key: z.string().meta({ description: 'The full new key, shown only in this response' }) })
  .meta({ id: 'RotatedApiKey' });

export const rotateApiKeyBody = z
  .strictObject({ grace_period_s: z.number().int().min(0).max(604_800).default(3600) })
  .meta({ id: 'RotateApiKey' });

export const usageQuery = z.object({ days: z.coerce.number().int().min(1).max(90).default(30) });

export const usageSchema = z
  .object({
    period_start: timestamp,
    period_end: timestamp,
    total_requests: z.number().int(),
    total_errors: z.number().int(),
    daily: z.array(z.object({ date: z.iso.date(), requests: z.number().int(), errors: z.number().int() })),
    by_route: z.array(
      z.object({
        method: z.string(),
        route: z.string().meta({ example: '/api/v1/agents/:id' }),
        requests: z.number().int(),
      }),
    ),
  })
  .meta({ id: 'Usage' });
export type Usage = z.infer<typeof usageSchema>;
