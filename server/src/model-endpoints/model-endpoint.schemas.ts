import { z } from 'zod';
import { pageQuery } from '../http/pagination.js';
import { atLeastOneField, httpUrl, timestamp } from '../shared/schemas.js';

const name = z.string().trim().min(1, 'must not be blank').max(200).meta({ description: 'How the console names it' });
const baseUrl = httpUrl.meta({
  description:
    'The API base, such as https://api.openai.com/v1 or http://127.0.0.1:11434/v1: `{base_url}/chat/completions` is called',
});
const apiKey = z
  .string()
  .trim()
  .min(1)
  .max(4000)
  .meta({ description: 'Sent as `Authorization: Bearer`; write-only: stored sealed, shown as its last 4 characters' });

export const modelEndpointSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    base_url: z.string(),
    api_key_last4: z.string().nullable().meta({ description: "The key's last 4 characters; null when it has none" }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'ModelEndpoint' });
export type ModelEndpoint = z.infer<typeof modelEndpointSchema>;

export const createModelEndpointBody = z
  .strictObject({ name, base_url: baseUrl, api_key: apiKey.optional() })
  .meta({ id: 'CreateModelEndpoint' });
export type CreateModelEndpointInput = z.infer<typeof createModelEndpointBody>;

export const updateModelEndpointBody = z
  .strictObject({
    name: name.optional(),
    base_url: baseUrl.optional(),
    api_key: apiKey.nullable().optional().meta({ description: 'A new key; null removes it; absent keeps it' }),
  })
  .refine(atLeastOneField, { message: 'at least one field is required' })
  .meta({ id: 'UpdateModelEndpoint' });
export type UpdateModelEndpointInput = z.infer<typeof updateModelEndpointBody>;

export const listModelEndpointsQuery = pageQuery;
