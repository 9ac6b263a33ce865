import { z } from 'zod';
import { defineRoute, type RouteDef } from '../../http/route.js';
import { idParams, timestamp } from '../../shared/schemas.js';
import type { DeploymentService } from '../../deployments/deployment.service.js';
import { refusalReasons, tokenCauses } from './diagnostics.table.js';
import type { InstallDiagnostics } from './install-diagnostics.js';

export const diagnosticsSchema = z
  .object({
    origins: z
      .object({
        origin: z.string().meta({ description: 'Empty when the page sent no Origin' }),
        sessions: z.number().int(),
        last_seen_at: timestamp,
      })
      .array()
      .meta({
        description:
          'The origins whose pages opened sessions, most first (at most 50; past 100 distinct origins a day, new ones are counted as `(other)`)',
      }),
    origins_total: z.number().int().meta({ description: 'How many distinct origins there are in all' }),
    refused: z
      .object({
        reason: z.enum(refusalReasons),
        origin: z.string().nullable().meta({ description: 'With origin_not_allowed: the origin refused' }),
        cause: z
          .enum(tokenCauses)
          .nullable()
          .meta({ description: 'With token_invalid: what was wrong with the token' }),
        count: z.number().int(),
        last_at: timestamp,
      })
      .array()
      .meta({ description: 'Refused upgrades and hellos, most first (at most 50)' }),
    refused_total: z.number().int().meta({ description: 'How many distinct refusals there are in all' }),
    last_session_at: timestamp.nullable(),
  })
  .meta({ id: 'InstallDiagnostics' });

export function diagnosticsRoute(diagnostics: InstallDiagnostics, deployments: DeploymentService): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/api/v1/deployments/:id/diagnostics',
    operationId: 'getDeploymentDiagnostics',
    summary:
      "What the deployment's widget met in the last 7 days: the origins that opened sessions, the refusals by reason and cause, the last session",
    tag: 'Deployments',
    params: idParams,
    errors: ['not_found'],
    success: { status: 200, description: 'Install diagnostics', data: diagnosticsSchema },
    handler: async ({ principal, params }) => {
      await deployments.get(principal.customerId, params.id);
      return { data: await diagnostics.read(params.id) };
    },
  });
}
