import { type Audit, auditEntry, recorded, type Writes } from '../audit/audit-trail.js';
import type { Db } from '../database.js';
import { AppError, invalidState, notFound } from '../errors.js';
import { type Page, pageOf } from '../http/pagination.js';
import { newId } from '../shared/random.js';
import { openText, sealText } from '../shared/sealed-text.js';
import type { SecretsKeys } from '../shared/secrets-key.js';
import { isoNow } from '../shared/time.js';
import {
  agentsNamingEndpoint,
  deleteModelEndpoint,
  findModelEndpoint,
  insertModelEndpoint,
  listModelEndpoints,
  type ModelEndpointRow,
  sealedEndpoints,
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
/** Where an endpoint moved from and to, as its audit record says it (never its key). */
const movedDetail = (moved: { from: string; to: string } | undefined) =>
  moved ? { detail: { from_origin: moved.from, to_origin: moved.to } } : {};

const originOf = (url: string): string => new URL(url).origin;

/** The text `sealed` holds, opened with the first of `keys` and `contexts` that opens it; undefined when none does. */
function openedWithAny(keys: readonly Buffer[], sealed: string, contexts: readonly string[]): string | undefined {
  for (const key of keys)
    for (const context of contexts) {
      try {
        return openText(key, sealed, context);
      } catch {
        // Not this key, or not this context: the next.
      }
    }
  return undefined;
}

/**
 * What a key is sealed with beside the customer: the origin it is sent to. A key moved (in the
 * store) to another origin does not open; through the API, moving an endpoint asks for its key again.
 */
const sealedFor = (customerId: string, baseUrl: string) => `${customerId} ${originOf(baseUrl)}`;

export class ModelEndpointService {
  constructor(private readonly parts: { db: Db; writes: Writes; keys: SecretsKeys }) {}

  async create(customerId: string, input: CreateModelEndpointInput, audit: Audit): Promise<ModelEndpoint> {
    const now = isoNow();
    const row: ModelEndpointRow = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      base_url: input.base_url.replace(/\/+$/, ''),
      ...this.#keyColumns(customerId, input.base_url, input.api_key ?? null),
      created_at: now,
      updated_at: now,
    };
    await recorded(
      this.parts.writes,
      audit,
      auditEntry('model_endpoint.created', row.id, { changes: Object.keys(input) }),
      (trx) => insertModelEndpoint(trx, row),
    );
    return toModelEndpoint(row);
  }

  async list(customerId: string, page: Page) {
    return pageOf(page, await listModelEndpoints(this.parts.db, customerId, page), toModelEndpoint);
  }

  async get(customerId: string, id: string): Promise<ModelEndpoint> {
    return toModelEndpoint(await this.#require(customerId, id));
  }

  /**
   * Moving an endpoint to another origin (scheme, host and port) needs its key given again, or
   * `api_key: null`: an editor, who can never read the key, must not be able to send it to a server
   * of theirs. The audit record keeps both origins.
   */
  async update(customerId: string, id: string, input: UpdateModelEndpointInput, audit: Audit): Promise<ModelEndpoint> {
    const row = await this.#require(customerId, id);
    const baseUrl = input.base_url !== undefined ? input.base_url.replace(/\/+$/, '') : row.base_url;
    const moved =
      originOf(baseUrl) !== originOf(row.base_url)
        ? { from: originOf(row.base_url), to: originOf(baseUrl) }
        : undefined;
    if (moved && row.api_key_sealed && input.api_key === undefined)
      throw new AppError(
        'invalid_request',
        'Moving the endpoint to another server would send its key there: give the key again',
        [
          {
            path: 'api_key',
            message: `required when base_url moves from ${moved.from} to ${moved.to} (null removes the key)`,
          },
        ],
      );
    const key = input.api_key !== undefined ? input.api_key : row.api_key_sealed ? await this.#opened(row) : null;
    const patch: Partial<ModelEndpointRow> = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.base_url !== undefined ? { base_url: baseUrl } : {}),
      // Sealed again for where it now goes (the same origin: a new path keeps it).
      ...(input.api_key !== undefined || input.base_url !== undefined
        ? this.#keyColumns(customerId, baseUrl, key)
        : {}),
      updated_at: isoNow(),
    };
    await recorded(
      this.parts.writes,
      audit,
      auditEntry('model_endpoint.updated', id, { changes: Object.keys(input), ...movedDetail(moved) }),
      (trx) => updateModelEndpoint(trx, customerId, id, patch),
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
    await recorded(this.parts.writes, audit, auditEntry('model_endpoint.deleted', id, { changes: [] }), (trx) =>
      deleteModelEndpoint(trx, customerId, id),
    );
    return { id, deleted: true };
  }

  /** Where to call, and the key opened (only for the origin it was sealed for); undefined when the customer has no such endpoint. */
  async target(customerId: string, id: string): Promise<ModelTarget | undefined> {
    const row = await findModelEndpoint(this.parts.db, customerId, id);
    if (!row) return undefined;
    return { baseUrl: row.base_url, key: row.api_key_sealed ? await this.#opened(row) : undefined };
  }

  /**
   * The key of `row`, sealed for its origin under the current secrets key. One sealed otherwise (under
   * a key of SECRETS_KEY_PREVIOUS, or before keys were bound to an origin, with its customer alone)
   * opens once, and is sealed again as a new one would be there and then.
   */
  async #opened(row: ModelEndpointRow): Promise<string> {
    const [current, ...previous] = this.parts.keys.all();
    const bound = sealedFor(row.customer_id, row.base_url);
    try {
      return openText(current!, row.api_key_sealed!, bound);
    } catch (err) {
      const text = openedWithAny([current!, ...previous], row.api_key_sealed!, [bound, row.customer_id]);
      if (text === undefined) throw err;
      await updateModelEndpoint(this.parts.db, row.customer_id, row.id, {
        api_key_sealed: sealText(current!, text, bound),
      });
      return text;
    }
  }

  /**
   * Seals every stored key again under the current secrets key (`npm run admin -- reseal-secrets`,
   * README, Security): after it, SECRETS_KEY_PREVIOUS may go. Returns how many were sealed again, and
   * how many could be opened by none of the keys given.
   */
  async resealAll(): Promise<{ resealed: number; unopened: number }> {
    let resealed = 0;
    let unopened = 0;
    for (const row of await sealedEndpoints(this.parts.db)) {
      try {
        await this.#opened(row);
        resealed++;
      } catch {
        unopened++;
      }
    }
    return { resealed, unopened };
  }

  async #require(customerId: string, id: string): Promise<ModelEndpointRow> {
    const row = await findModelEndpoint(this.parts.db, customerId, id);
    if (!row) throw notFound('Model endpoint');
    return row;
  }

  #keyColumns(customerId: string, baseUrl: string, key: string | null) {
    return {
      api_key_sealed: key === null ? null : sealText(this.parts.keys.current(), key, sealedFor(customerId, baseUrl)),
      api_key_last4: key === null ? null : key.slice(-4),
    };
  }
}
