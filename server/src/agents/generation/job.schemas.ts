import { z } from 'zod';
import { timestamp } from '../../shared/schemas.js';

export const jobStatuses = ['queued', 'running', 'succeeded', 'failed'] as const;

export const jobSchema = z
  .object({
    job_id: z.uuid(),
    agent_id: z.uuid(),
    status: z.enum(jobStatuses),
    progress: z.number().int().min(0).max(100),
    error: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Job' });
export type Job = z.infer<typeof jobSchema>;

export const jobAcceptedSchema = z
  .object({
    job_id: z.uuid(),
    agent_id: z.uuid(),
    status: z.literal('queued'),
    polling_url: z.string().meta({ example: '/api/v1/jobs/00000000-0000-4000-8000-000000000000/status' }),
  })
  .meta({ id: 'JobAccepted' });
