import type { Db, Trx } from '../database.js';
import { clientAddress, type ProxyTrust } from '../http/client-address.js';
import type { RouteRequest, RouteResponse } from '../http/exchange.js';
import type { Principal } from '../http/principal.js';
import { newTimeOrderedId } from '../shared/random.js';
import { insertAuditEntry } from './audit.repository.js';

/** Who made a change (README, Your team). */
export interface Actor {
  type: 'user' | 'api_key' | 'admin' | 'service';
  id: string | null;
  email: string | null;
}

/** Every change the audit log records (README, Your team): the kind of thing changed, and how. */
export const AUDIT_ACTIONS = [
  'agent.created',
  'agent.updated',
  'agent.published',
  'agent.deleted',
  'agent_test.created',
  'agent_test.updated',
  'agent_test.deleted',
  'api_key.rotated',
  'conversation.closed',
  'conversation.deleted',
  'conversation.released',
  'conversation.taken_over',
  'customer.created',
  'customer.single_sign_on_changed',
  'delivery.redelivered',
  'deployment.created',
  'deployment.updated',
  'deployment.activated',
  'deployment.deactivated',
  'deployment.deleted',
  'deployment.secret_rotated',
  'deployment.transcript_hook_disabled',
  'deployment.transcript_hook_enabled',
  'deployment.privacy_changed',
  'knowledge_base.created',
  'knowledge_base.updated',
  'knowledge_base.deleted',
  'knowledge_document.added',
  'knowledge_document.updated',
  'knowledge_document.refreshed',
  'knowledge_document.deleted',
  'model_endpoint.created',
  'model_endpoint.updated',
  'model_endpoint.deleted',
  'user.invited',
  'user.invited_again',
  'user.invitation_accepted',
  'user.password_set',
  'user.signed_in',
  'user.single_sign_on_linked',
  'user.role_changed',
  'user.removed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an action changes: the part of its name before the dot (`deployment` of `deployment.created`). */
type TargetOf<A extends AuditAction> = A extends `${infer T}.${string}` ? T : never;

/** What a change was: `changes` are field names, never their values. */
export interface AuditEntry {
  action: AuditAction;
  target: { type: TargetOf<AuditAction>; id: string | null };
  changes?: readonly string[];
  /** What a name does not say, where it matters (an endpoint's origin before and after); never a secret. */
  detail?: AuditDetail;
}

/** The record of `action` on the thing `id` names, the kind of thing read from the action. */
export function auditEntry(
  action: AuditAction,
  id: string | null,
  more: { changes?: readonly string[]; detail?: AuditDetail } = {},
): AuditEntry {
  return { action, target: { type: action.slice(0, action.indexOf('.')) as TargetOf<AuditAction>, id }, ...more };
}

export type AuditDetail = Readonly<Record<string, string | number | boolean | null>>;

/**
 * Records one change of one customer, inside the transaction that makes it: the change and its
 * record commit together or not at all. Built per request (or per command) with who and whence.
 */
export type Audit = (trx: Trx, entry: AuditEntry) => Promise<void>;

/** The audit of a person known only once their credential is read. */
export type AuditFor = (who: { customerId: string; userId: string; email: string }) => Audit;

/**
 * Where changes are written: the store's group commit (`store/write-batcher.ts`: the changes asked
 * for together commit as one), keyed by what they change so that one thing's changes keep their
 * order; a command outside the service writes in a transaction of its own ({@link inTransaction}).
 */
export interface Writes {
  run<T>(key: string, work: (trx: Trx) => Promise<T>): Promise<T>;
}

export const inTransaction = (db: Db): Writes => ({ run: (_key, work) => db.transaction().execute(work) });

/**
 * A change and its audit record, in one transaction: both commit, or neither. Written through the
 * group commit, the record costs a management write no second commit (`npm run bench -- team`).
 */
export function recorded<T>(
  writes: Writes,
  audit: Audit,
  entry: AuditEntry,
  change: (trx: Trx) => Promise<T>,
): Promise<T> {
  return writes.run(`${entry.target.type}:${entry.target.id ?? ''}`, async (trx) => {
    const result = await change(trx);
    await audit(trx, entry);
    return result;
  });
}

interface Origin {
  actor: Actor;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

/** A header's value as kept: bounded, so a client cannot make the log hold megabytes. */
const bounded = (value: string | undefined): string | null => (value ? value.slice(0, 512) : null);

/** Where the audit records of requests, commands and the service's own changes are made. */
export class AuditTrail {
  constructor(private readonly settings: { trustProxy: ProxyTrust }) {}

  /** The change a management request makes, by its caller. */
  by({ principal, req, res }: { principal: Principal; req: RouteRequest; res: RouteResponse }): Audit {
    const actor: Actor = principal.userId
      ? { type: 'user', id: principal.userId, email: principal.email ?? null }
      : { type: 'api_key', id: principal.keyId, email: null };
    return auditFor(principal.customerId, this.#origin(actor, req, res));
  }

  /** A change a person makes to their own account while signing in (a password chosen, an invitation used). */
  signingIn(req: RouteRequest, res: RouteResponse): AuditFor {
    return (who) =>
      auditFor(who.customerId, this.#origin({ type: 'user', id: who.userId, email: who.email }, req, res));
  }

  #origin(actor: Actor, req: RouteRequest, res: RouteResponse): Origin {
    return {
      actor,
      ip: clientAddress(req, this.settings.trustProxy),
      userAgent: bounded(req.headers['user-agent']),
      requestId: typeof res.locals.requestId === 'string' ? res.locals.requestId : null,
    };
  }
}

/** A change the service makes by itself (a transcript target it turned off), or an `npm run admin` command. */
export const auditOf = (customerId: string, type: 'service' | 'admin'): Audit =>
  auditFor(customerId, { actor: { type, id: null, email: null }, ip: null, userAgent: null, requestId: null });

function auditFor(customerId: string, origin: Origin): Audit {
  return (trx, entry) =>
    insertAuditEntry(trx, {
      id: newTimeOrderedId(),
      customer_id: customerId,
      at: new Date().toISOString(),
      actor_type: origin.actor.type,
      actor_id: origin.actor.id,
      actor_email: origin.actor.email,
      action: entry.action,
      target_type: entry.target.type,
      target_id: entry.target.id,
      changes: JSON.stringify([...new Set(entry.changes ?? [])]),
      detail: entry.detail ? JSON.stringify(entry.detail) : null,
      ip: origin.ip,
      user_agent: origin.userAgent,
      request_id: origin.requestId,
    });
}
