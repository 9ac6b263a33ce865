import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.js';
import type { KeptResponse, RepeatGuard } from '../http/route.js';
import { isoIn, isoNow } from '../shared/time.js';
import type { Db } from '../database.js';
import { BackgroundLoop } from '../shared/background-loop.js';
import type { StoreHealth } from '../store/store-health.js';
import { secretDigest } from '../shared/secret-digest.js';
import { ResponseSeal } from './response-seal.js';
import {
  claimKey,
  completeKey,
  findKey,
  type IdempotencyRow,
  purgeKeys,
  releaseKey,
  takeOverKey,
} from './idempotency.repository.js';

const KEEP_MS = 24 * 3_600_000;
/** A request holding a key this long without finishing was lost with its node; a repeat may run it again. */
const LOCK_MS = 60_000;
const WAIT_POLL_MS = 50;
const PURGE_EVERY_MS = 10 * 60_000;
const KEY = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key, if it sent one; a malformed one is refused. */
function idempotencyKeyOf(req: IncomingMessage): string | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new AppError('invalid_request', 'Invalid Idempotency-Key', [
      { path: 'headers.idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
  return key;
}

/** What a key was used for: the same method, path (with its query) and body bytes, or not. */
function fingerprintOf(req: IncomingMessage, body: Buffer | undefined): string {
  return createHash('sha256')
    .update(`${req.method} ${req.url}\n`)
    .update(body ?? Buffer.alloc(0))
    .digest('hex');
}

/**
 * Safe retries for POST routes (README, The management API): the first successful response to a
 * customer's key is kept 24 h in the store (so it holds across nodes and restarts) and sent again,
 * marked `Idempotent-Replayed: true`, to every repeat of the same request; a repeat while the first
 * still runs waits for it; the key used for a different request is `409 idempotency_conflict`.
 * A request that fails keeps nothing: its retry runs afresh (a 4xx fails the same way, a 503 may
 * not), and its error never carries another request's id.
 */
export class Idempotency implements RepeatGuard {
  private readonly purging: BackgroundLoop;

  constructor(private readonly parts: { db: Db; health: StoreHealth }) {
    this.purging = new BackgroundLoop(
      { what: 'purging idempotency keys', pass: () => purgeKeys(parts.db, isoIn(-KEEP_MS)), health: parts.health },
      { everyMs: PURGE_EVERY_MS },
    );
  }

  start(): void {
    this.purging.start();
    void this.purging.run();
  }

  stop(): Promise<void> {
    return this.purging.stop();
  }

  /** A response is kept for the key's 24 h and sent again to every repeat; a request without a key is not guarded. */
  guard(req: IncomingMessage, customerId: string, body: Buffer | undefined, respond: () => Promise<KeptResponse>) {
    const key = idempotencyKeyOf(req);
    return key === undefined ? undefined : this.run(customerId, key, fingerprintOf(req, body), respond);
  }

  private async run(
    customerId: string,
    idempotencyKey: string,
    fingerprint: string,
    work: () => Promise<KeptResponse>,
  ): Promise<{ response: KeptResponse; replayed: boolean }> {
    // The store knows the key by its SHA-256 only: the key itself opens the sealed response.
    const key = secretDigest(idempotencyKey);
    const seal = new ResponseSeal(customerId, idempotencyKey);
    const waitUntil = Date.now() + LOCK_MS;
    for (;;) {
      const now = isoNow();
      const lock = { fingerprint, locked_until: isoIn(LOCK_MS), created_at: now };
      if (
        await claimKey(this.parts.db, {
          customer_id: customerId,
          key,
          state: 'running',
          response_status: null,
          response_headers: null,
          response_body: null,
          ...lock,
        })
      ) {
        return { response: await this.complete(customerId, key, seal, work), replayed: false };
      }
      const seen = await findKey(this.parts.db, customerId, key);
      if (!seen) continue; // released by a request that failed: claim it again
      const expired = seen.created_at < isoIn(-KEEP_MS);
      if (!expired && seen.fingerprint !== fingerprint) {
        throw new AppError(
          'idempotency_conflict',
          'This Idempotency-Key was used for a different request (method, path or body)',
        );
      }
      if (!expired && seen.state === 'done') return { response: keptOf(seen, seal), replayed: true };
      if (expired || seen.locked_until < now) {
        if (await takeOverKey(this.parts.db, seen, lock))
          return { response: await this.complete(customerId, key, seal, work), replayed: false };
        continue;
      }
      if (Date.now() > waitUntil)
        throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still running');
      await sleep(WAIT_POLL_MS);
    }
  }

  private async complete(
    customerId: string,
    key: string,
    seal: ResponseSeal,
    work: () => Promise<KeptResponse>,
  ): Promise<KeptResponse> {
    let response: KeptResponse;
    try {
      response = await work();
    } catch (err) {
      await releaseKey(this.parts.db, customerId, key).catch((failure) =>
        this.parts.health.failed(failure, 'releasing an idempotency key'),
      );
      throw err;
    }
    // The work is done whatever happens here: a key the store did not take is released by its lock running out.
    await completeKey(this.parts.db, customerId, key, {
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: seal.seal(response.body),
    }).catch((failure) => this.parts.health.failed(failure, 'keeping an idempotent response'));
    return response;
  }
}

function keptOf(row: IdempotencyRow, seal: ResponseSeal): KeptResponse {
  return {
    status: row.response_status!,
    headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>,
    body: row.response_body ? seal.open(row.response_body) : '',
  };
}
