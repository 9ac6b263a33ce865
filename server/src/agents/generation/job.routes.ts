import { type RouteDef, defineRoute } from '../../http/route.js';
import { idParams } from '../../shared/schemas.js';
import type { Db } from '../../database.js';
import { jobSchema } from './job.schemas.js';
import { getJob } from './job.service.js';

export function jobRoutes(db: Db): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/jobs/:id/status',
      operationId: 'getJobStatus',
      summary: 'Poll a generation job (beyond the specification: the polling address works)',
      tag: 'Agents',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The job', data: jobSchema },
      handler: async ({ principal, params }) => ({ data: await getJob(db, principal.customerId, params.id) }),
    }),
  ];
}
