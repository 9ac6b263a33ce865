import type { Db } from '../database.js';
import type { Page } from '../store/page.js';
import { type Listed, listed } from '../store/listing.js';
import type { ModelEndpointTable } from './model-endpoint.table.js';

export type ModelEndpointRow = ModelEndpointTable;

export async function insertModelEndpoint(db: Db, row: ModelEndpointRow): Promise<void> {
  await db.insertInto('model_endpoints').values(row).execute();
}

export async function findModelEndpoint(db: Db, customerId: string, id: string): Promise<ModelEndpointRow | undefined> {
  return db
    .selectFrom('model_endpoints')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listModelEndpoints(db: Db, customerId: string, page: Page): Promise<Listed<ModelEndpointRow>> {
  const matching = db.selectFrom('model_endpoints').where('customer_id', '=', customerId);
  return listed(
    page,
    matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    matching.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}

export async function updateModelEndpoint(
  db: Db,
  customerId: string,
  id: string,
  patch: Partial<ModelEndpointRow>,
): Promise<void> {
  await db
    .updateTable('model_endpoints')
    .set(patch)
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .execute();
}

export async function deleteModelEndpoint(db: Db, customerId: string, id: string): Promise<void> {
  await db.deleteFrom('model_endpoints').where('customer_id', '=', customerId).where('id', '=', id).execute();
}

/** The names of this customer's agents whose published or draft spec names the endpoint. */
export async function agentsNamingEndpoint(db: Db, customerId: string, id: string): Promise<string[]> {
  const rows = await db
    .selectFrom('agents')
    .select('name')
    .where('customer_id', '=', customerId)
    .where((eb) => eb.or([eb('agent_spec', 'like', `%${id}%`), eb('draft_spec', 'like', `%${id}%`)]))
    .orderBy('name')
    .execute();
  return rows.map((r) => r.name);
}

/** Every endpoint with a sealed key, of every customer: what a rotation of the secrets key seals again. */
export async function sealedEndpoints(db: Db): Promise<ModelEndpointRow[]> {
  return db.selectFrom('model_endpoints').selectAll().where('api_key_sealed', 'is not', null).execute();
}
