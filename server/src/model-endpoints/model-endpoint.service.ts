import { type Audit, type AuditEntry, recorded, type Writes } from '../audit/audit-trail.js';
import type { Db } from '../database.js';
import { invalidState, notFound } from '../errors.js';
import { type Page, pageOf } from '../http/pagination.js';
import { newId } from '../shared/random.js';
import { openText, sealText } from '../shared/sealed-text.js';
import { isoNow } from '../shared/time.js';
import {
  agentsNamingEndpoint,
  deleteModelEndpoint,
  findModelEndpoint,
  insertModelEndpoint,
  listModelEndpoints,
  type ModelEndpointRow,
  updateModelEndpoint,
} from './model-endpoint.repository.js';
import type { CreateModelEndpointInput, ModelEndpoint, UpdateModelEndpointInput } from './model-endpoint.schemas.js';

/** Where a model is called, and with which key (never shown, never logged). */
export interface ModelTarget {
  baseUrl: string;
  key: string | undefined;
}

const toModelEndpoint = (row: ModelEndpointRow): ModelEndpoint => ({
  id: row.id,
  name: row.name,
  base_url: row.base_url,
  api_key_last4: row.api_key_last4,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/**
 * A customer's model endpoints (README, An agent without a server): the key is sealed as it
 * arrives, bound to the customer, and opened only to call the model.
 */
/** An endpoint's audit record: the fields given (`api_key` by name only). */
const changeOf = (verb: string, id: string, input: object): AuditEntry => ({
  action: `model_endpoint.${verb}`,
  target: { type: 'model_endpoint', id },
  changes: Object.keys(input),
});

export class ModelEndpointService {
  constructor(private readonly parts: { db: Db; writes: Writes; secretsKey: () => Buffer }) {}

  async create(customerId: string, input: CreateModelEndpointInput, audit: Audit): Promise<ModelEndpoint> {
    const now = isoNow();
    const row: ModelEndpointRow = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      base_url: input.base_url.replace(/\/+$/, ''),
      ...this.#keyColumns(customerId, input.api_key ?? null),
      created_at: now,
      updated_at: now,
    };
    await recorded(this.parts.writes, audit, changeOf('created', row.id, input), (trx) =>
      insertModelEndpoint(trx, row),
    );
    return toModelEndpoint(row);
  }

  async list(customerId: string, page: Page) {
    return pageOf(page, await listModelEndpoints(this.parts.db, customerId, page), toModelEndpoint);
  }

  async get(customerId: string, id: string): Promise<ModelEndpoint> {
    return toModelEndpoint(await this.#require(customerId, id));
  }

  async update(customerId: string, id: string, input: UpdateModelEndpointInput, audit: Audit): Promise<ModelEndpoint> {
    const row = await this.#require(customerId, id);
    const patch: Partial<ModelEndpointRow> = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.base_url !== undefined ? { base_url: input.base_url.replace(/\/+$/, '') } : {}),
      ...(input.api_key !== undefined ? this.#keyColumns(customerId, input.api_key) : {}),
      updated_at: isoNow(),
    };
    await recorded(this.parts.writes, audit, changeOf('updated', id, input), (trx) =>
      updateModelEndpoint(trx, customerId, id, patch),
    );
    return toModelEndpoint({ ...row, ...patch });
  }

  /** Refused while an agent's spec names it: its turns would fail. */
  async remove(customerId: string, id: string, audit: Audit): Promise<{ id: string; deleted: true }> {
    await this.#require(customerId, id);
    const agents = await agentsNamingEndpoint(this.parts.db, customerId, id);
    if (agents.length)
      throw invalidState(
        `The endpoint is named by ${agents.length === 1 ? 'the agent' : 'the agents'} ${agents.map((a) => `'${a}'`).join(', ')}: change their responder first`,
      );
    await recorded(this.parts.writes, audit, changeOf('deleted', id, {}), (trx) =>
      deleteModelEndpoint(trx, customerId, id),
    );
    return { id, deleted: true };
  }

  /** Where to call, and the key opened; undefined when the customer has no such endpoint. */
  async target(customerId: string, id: string): Promise<ModelTarget | undefined> {
    const row = await findModelEndpoint(this.parts.db, customerId, id);
    if (!row) return undefined;
    return {
      baseUrl: row.base_url,
      key: row.api_key_sealed ? openText(this.parts.secretsKey(), row.api_key_sealed, customerId) : undefined,
    };
  }

  async #require(customerId: string, id: string): Promise<ModelEndpointRow> {
    const row = await findModelEndpoint(this.parts.db, customerId, id);
    if (!row) throw notFound('Model endpoint');
    return row;
  }

  #keyColumns(customerId: string, key: string | null) {
    return {
      api_key_sealed: key === null ? null : sealText(this.parts.secretsKey(), key, customerId),
      api_key_last4: key === null ? null : key.slice(-4),
    };
  }
}
