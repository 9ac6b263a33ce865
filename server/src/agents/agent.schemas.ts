import { z } from 'zod';
import { pageQuery } from '../http/pagination.js';
import { atLeastOneField, specObject, timestamp } from '../shared/schemas.js';
import { AGENT_SPEC_REF } from './agent-spec.js';

/**
 * An agent's spec: free-form JSON (at most 64 KiB), described in the document by the keys the
 * service reads (AgentSpecDocument); a draft is saved as sent, publishing checks those keys.
 */
const agentSpec = specObject.meta({
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(jsonSchema, AGENT_SPEC_REF);
  },
});

export const agentStatuses = ['generating', 'draft', 'published', 'failed'] as const;

const name = z
  .string()
  .min(1)
  .max(200)
  .refine((s) => s.trim().length > 0, { message: 'must not be blank' });
const description = z.string().max(4000);

export const agentSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.enum(agentStatuses),
    version: z.number().int().meta({ description: '0 until the first publish' }),
    agent_spec: agentSpec.nullable().meta({ description: 'The published spec' }),
    draft_spec: agentSpec.nullable(),
    generated_spec: agentSpec.nullable(),
    test_mode_enabled: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
    project_id: z.string().nullable(),
    knowledge_base_id: z.string().nullable(),
  })
  .meta({ id: 'Agent' });
export type Agent = z.infer<typeof agentSchema>;

export const listAgentsQuery = pageQuery.extend({
  status: z.enum(agentStatuses).optional(),
  search: z.string().max(200).optional().meta({ description: 'Case-insensitive substring of name or description' }),
});

export const createAgentBody = z
  .strictObject({ name, description: description.optional() })
  .meta({ id: 'CreateAgent' });
export type CreateAgentInput = z.infer<typeof createAgentBody>;

export const updateAgentBody = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    draft_spec: agentSpec.optional().meta({ description: 'Replaces the whole draft (no merge); checked on publish' }),
    test_mode_enabled: z.boolean().optional(),
    project_id: z.string().max(200).nullable().optional(),
    knowledge_base_id: z.string().max(200).nullable().optional().meta({
      description:
        'One of your knowledge bases (README, Answers from your documents): its passages go with each turn; null for none',
    }),
  })
  .refine(atLeastOneField, { message: 'at least one field is required' })
  .meta({ id: 'UpdateAgent' });
export type UpdateAgentInput = z.infer<typeof updateAgentBody>;

export const agentSpecSchema = z
  .object({
    agent_id: z.uuid(),
    version: z.number().int(),
    agent_spec: specObject.nullable(),
    draft_spec: specObject.nullable(),
    generated_spec: specObject.nullable(),
  })
  .meta({ id: 'AgentSpec' });

export const agentVersionSchema = z
  .object({
    version: z.number().int().min(1),
    agent_spec: specObject,
    published_at: timestamp,
  })
  .meta({ id: 'AgentVersion' });
export type AgentVersion = z.infer<typeof agentVersionSchema>;

export const agentVersionParams = z.object({ id: z.uuid(), version: z.coerce.number().int().min(1) });
