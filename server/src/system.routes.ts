import { z } from 'zod';
import { AppError } from './errors.js';
import { type RouteDef, defineRoute } from './http/route.js';
import type { Store } from './store/db.js';

export interface SystemRouteDeps {
  store: Store;
  /** True once a SIGTERM started the drain: the load balancer must stop sending new work here. */
  draining(): boolean;
  /** The OpenAPI document; built on first request, not at start. */
  openApi(): unknown;
}

const statusSchema = z.object({ status: z.literal('ok') });

export function systemRoutes({ store, draining, openApi }: SystemRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'The process is up',
      tag: 'System',
      auth: false,
      success: { status: 200, description: 'Up', data: statusSchema },
      handler: () => ({ data: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'The node takes new work: not draining, and the store is reachable',
      tag: 'System',
      auth: false,
      errors: ['unavailable'],
      success: { status: 200, description: 'Ready', data: statusSchema },
      handler: async () => {
        if (draining()) throw new AppError('unavailable', 'The node is draining before it stops');
        try {
          await store.ping();
        } catch {
          throw new AppError('unavailable', 'The store is not reachable');
        }
        return { data: { status: 'ok' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This document',
      tag: 'System',
      auth: false,
      success: { status: 200, description: 'OpenAPI 3.1', data: z.record(z.string(), z.unknown()), raw: true },
      handler: () => ({ data: openApi() }),
    }),
  ];
}
