import { type Selectable, sql } from 'kysely';
import type { Db, Trx } from '../database.js';
import type { Page } from '../store/page.js';
import type { Dialect } from '../store/db.js';
import { queryShape } from '../store/query-shape.js';
import type { AuditLogTable } from './audit.table.js';

export type AuditRow = Selectable<AuditLogTable>;

export interface AuditFilter {
  /** A user's or key's id, a user's email, or an actor type (`api_key`, `admin`, `service`). */
  actor?: string | undefined;
  action?: string | undefined;
  target_type?: string | undefined;
  target_id?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** Built and compiled once: every management write makes one (`store/query-shape.ts`). */
const insertShape = queryShape((db, v: AuditRow) =>
  db.insertInto('audit_log').values({
    id: v.id,
    customer_id: v.customer_id,
    at: v.at,
    actor_type: v.actor_type,
    actor_id: v.actor_id,
    actor_email: v.actor_email,
    action: v.action,
    target_type: v.target_type,
    target_id: v.target_id,
    changes: v.changes,
    detail: v.detail,
    ip: v.ip,
    user_agent: v.user_agent,
    request_id: v.request_id,
  }),
);

export async function insertAuditEntry(trx: Db, row: AuditRow): Promise<void> {
  await insertShape(trx, row);
}

function filtered(db: Db, customerId: string, filter: AuditFilter) {
  let query = db.selectFrom('audit_log').where('customer_id', '=', customerId);
  const { actor } = filter;
  if (actor)
    query = query.where((eb) =>
      eb.or([eb('actor_id', '=', actor), eb('actor_email', '=', actor.toLowerCase()), eb('actor_type', '=', actor)]),
    );
  if (filter.action) query = query.where('action', '=', filter.action);
  if (filter.target_type) query = query.where('target_type', '=', filter.target_type);
  if (filter.target_id) query = query.where('target_id', '=', filter.target_id);
  if (filter.from) query = query.where('at', '>=', filter.from);
  if (filter.to) query = query.where('at', '<', filter.to);
  return query;
}

/** A record's target, by kind and id. */
export interface AuditTarget {
  type: string;
  id: string | null;
}

/**
 * What each kind of target is called now, read from its own table within the customer: an agent,
 * a knowledge base or a model endpoint by its name, a deployment by its agent's and environment, a
 * console user by address, a document by title. Keyed `type:id`; a kind with no name (a key, a
 * conversation) or a thing since deleted has none.
 */
export async function targetNames(
  db: Db,
  customerId: string,
  targets: readonly AuditTarget[],
): Promise<Map<string, string>> {
  const idsOf = (type: string) => [...new Set(targets.filter((t) => t.type === type && t.id).map((t) => t.id!))];
  const named = async (type: string, rows: (ids: string[]) => Promise<{ id: string; name: string }[]>) => {
    const ids = idsOf(type);
    return ids.length ? (await rows(ids)).map(({ id, name }) => [`${type}:${id}`, name] as const) : [];
  };
  const pairs = await Promise.all([
    named('agent', (ids) =>
      db
        .selectFrom('agents')
        .select(['id', 'name'])
        .where('customer_id', '=', customerId)
        .where('id', 'in', ids)
        .execute(),
    ),
    named('deployment', async (ids) =>
      (
        await db
          .selectFrom('deployments')
          .innerJoin('agents', 'agents.id', 'deployments.agent_id')
          .select(['deployments.id', 'agents.name', 'deployments.environment'])
          .where('deployments.customer_id', '=', customerId)
          .where('deployments.id', 'in', ids)
          .execute()
      ).map((d) => ({ id: d.id, name: `${d.name} (${d.environment})` })),
    ),
    named('user', async (ids) =>
      (
        await db
          .selectFrom('console_users')
          .select(['id', 'email'])
          .where('customer_id', '=', customerId)
          .where('id', 'in', ids)
          .execute()
      ).map((u) => ({ id: u.id, name: u.email })),
    ),
    named('knowledge_base', (ids) =>
      db
        .selectFrom('knowledge_bases')
        .select(['id', 'name'])
        .where('customer_id', '=', customerId)
        .where('id', 'in', ids)
        .execute(),
    ),
    named('knowledge_document', async (ids) =>
      (
        await db
          .selectFrom('knowledge_documents')
          .select(['id', 'title'])
          .where('customer_id', '=', customerId)
          .where('id', 'in', ids)
          .execute()
      ).map((d) => ({ id: d.id, name: d.title })),
    ),
    named('model_endpoint', (ids) =>
      db
        .selectFrom('model_endpoints')
        .select(['id', 'name'])
        .where('customer_id', '=', customerId)
        .where('id', 'in', ids)
        .execute(),
    ),
    named('customer', (ids) =>
      db.selectFrom('customers').select(['id', 'name']).where('id', '=', customerId).where('id', 'in', ids).execute(),
    ),
  ]);
  return new Map(pairs.flat());
}

/** A page of the customer's records, newest first, and how many match. */
export async function listAudit(
  db: Db,
  customerId: string,
  filter: AuditFilter,
  page: Page,
): Promise<{ rows: AuditRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    filtered(db, customerId, filter)
      .selectAll()
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.per_page)
      .offset((page.page - 1) * page.per_page)
      .execute(),
    filtered(db, customerId, filter)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** The next `limit` records older than `after` (newest first): an export reads step by step. */
export async function auditAfter(
  db: Db,
  customerId: string,
  filter: AuditFilter,
  after: Pick<AuditRow, 'at' | 'id'> | undefined,
  limit: number,
): Promise<AuditRow[]> {
  let query = filtered(db, customerId, filter).selectAll();
  if (after)
    query = query.where((eb) =>
      eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]),
    );
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/**
 * Deletes up to `limit` records older than `before`; returns how many. The table refuses any other
 * DELETE: this transaction says it is the purge (on PostgreSQL a setting of its own, on SQLite a
 * row of `audit_purge` that it removes again before it commits).
 */
export async function purgeAudit(trx: Trx, before: string, limit: number, dialect: Dialect): Promise<number> {
  if (dialect === 'postgres') await sql`select set_config('concierge.audit_purge', 'on', true)`.execute(trx);
  else await sql`INSERT INTO audit_purge (running) VALUES (1)`.execute(trx);
  const claim = dialect === 'postgres' ? sql` FOR UPDATE SKIP LOCKED` : sql``;
  const result = await sql`DELETE FROM audit_log WHERE id IN (
      SELECT id FROM audit_log WHERE at < ${before} ORDER BY at LIMIT ${limit}${claim})`.execute(trx);
  if (dialect === 'sqlite') await sql`DELETE FROM audit_purge`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}
