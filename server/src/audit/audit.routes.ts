import { z } from 'zod';
import type { Db } from '../database.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { pageOf, pageQuery } from '../http/pagination.js';
import { timestamp } from '../shared/schemas.js';
import { type AuditRow, auditAfter, listAudit, targetNames } from './audit.repository.js';

/** Records one export streams at most; the next request narrows `to`. */
export const AUDIT_EXPORT_LIMIT = 100_000;
const EXPORT_STEP = 500;

const auditFilter = z.object({
  actor: z
    .string()
    .max(320)
    .optional()
    .meta({ description: "A user's or API key's id, a user's email, or an actor type: api_key, admin, service" }),
  action: z.string().max(100).optional().meta({ description: 'As `agent.updated`' }),
  target_type: z.string().max(100).optional(),
  target_id: z.string().max(200).optional(),
  from: timestamp.optional().meta({ description: 'At or after' }),
  to: timestamp.optional().meta({ description: 'Before' }),
});

export const auditEntrySchema = z
  .object({
    id: z.uuid(),
    at: timestamp,
    actor: z.object({
      type: z.enum(['user', 'api_key', 'admin', 'service']),
      id: z.string().nullable(),
      email: z.string().optional(),
    }),
    action: z.string(),
    target: z.object({
      type: z.string(),
      id: z.string().nullable(),
      name: z.string().nullable().meta({
        description:
          "What it is called now (an agent's or a model endpoint's name, a user's address, a deployment's agent and environment); null for a key, a conversation, or one since deleted",
      }),
    }),
    changes: z.array(z.string()).meta({ description: 'The names of the fields that changed: never their values' }),
    detail: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .nullable()
      .meta({
        description:
          "What the change was where a name does not say it, never a secret: a model endpoint's `from_origin` and `to_origin`, a sign-in's `method`",
      }),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    request_id: z.string().nullable(),
  })
  .meta({ id: 'AuditEntry' });

export const toAuditEntry = (row: AuditRow, names: ReadonlyMap<string, string>): z.output<typeof auditEntrySchema> => ({
  id: row.id,
  at: row.at,
  actor: {
    type: row.actor_type as 'user' | 'api_key' | 'admin' | 'service',
    id: row.actor_id,
    ...(row.actor_email ? { email: row.actor_email } : {}),
  },
  action: row.action,
  target: { type: row.target_type, id: row.target_id, name: names.get(`${row.target_type}:${row.target_id}`) ?? null },
  changes: JSON.parse(row.changes) as string[],
  detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, string | number | boolean | null>),
  ip: row.ip,
  user_agent: row.user_agent,
  request_id: row.request_id,
});

/** What the records' targets are called now: one query per kind of target among them. */
const namesOf = (db: Db, customerId: string, rows: readonly AuditRow[]) =>
  targetNames(
    db,
    customerId,
    rows.map((row) => ({ type: row.target_type, id: row.target_id })),
  );

/** The audit log (README, Your team): read and exported, never changed through the API. */
export function auditRoutes(db: Db): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/audit-log',
      operationId: 'listAuditLog',
      summary: 'List who changed what, newest first, filtered; kept AUDIT_RETENTION_DAYS (365)',
      tag: 'Team',
      query: pageQuery.extend(auditFilter.shape),
      success: { status: 200, description: 'A page of records', data: auditEntrySchema.array(), list: true },
      handler: async ({ principal, query: { page, per_page, ...filter } }) => {
        const listed = await listAudit(db, principal.customerId, filter, { page, per_page });
        const names = await namesOf(db, principal.customerId, listed.rows);
        return pageOf({ page, per_page }, listed, (row) => toAuditEntry(row, names));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/audit-log/export',
      operationId: 'exportAuditLog',
      summary:
        'Stream the records as NDJSON, one per line, newest first (the same filters; at most 100,000 a request; 2 at once per customer)',
      tag: 'Team',
      query: auditFilter,
      errors: ['rate_limited'],
      success: {
        status: 200,
        description: 'One AuditEntry per line. Past 100,000, ask again with `to` set to the last line’s `at`',
        data: auditEntrySchema,
        contentType: 'application/x-ndjson',
        stream: true,
      },
      handler: ({ principal, query }) => ({ data: exportAudit(db, principal.customerId, query) }),
    }),
  ];
}

async function* exportAudit(db: Db, customerId: string, filter: z.output<typeof auditFilter>): AsyncGenerator<string> {
  let after: AuditRow | undefined;
  for (let sent = 0; sent < AUDIT_EXPORT_LIMIT;) {
    const rows = await auditAfter(db, customerId, filter, after, Math.min(EXPORT_STEP, AUDIT_EXPORT_LIMIT - sent));
    if (!rows.length) return;
    const names = await namesOf(db, customerId, rows);
    yield rows.map((row) => `${JSON.stringify(toAuditEntry(row, names))}\n`).join('');
    sent += rows.length;
    after = rows[rows.length - 1]!;
  }
}
