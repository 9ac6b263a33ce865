import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newId } from '../shared/random.js';
import { secretDigest } from '../shared/secret-digest.js';
import type { Db, Trx } from '../database.js';
import type { Dialect } from '../store/db.js';
import { limitAddressOf } from '../http/client-address.js';
import {
  acceptInvitation,
  claimWelcome,
  countAttempts,
  deleteSession,
  findSession,
  findUserByEmail,
  findUserById,
  findUserByWelcome,
  insertUser,
  isInvited,
  forgetAttempt,
  inSignInLedger,
  noteAttempt,
  openSession,
  rehashPassword,
  setWelcome,
  touchSession,
} from './console-account.repository.js';
import type { PasswordHasher } from './password-hasher.js';
import { type Audit, type AuditFor, inTransaction, recorded } from '../audit/audit-trail.js';

const HOUR_MS = 3_600_000;
const WELCOME_TTL_MS = 24 * HOUR_MS;
export const SESSION_ABSOLUTE_MS = 12 * HOUR_MS;
const SESSION_IDLE_MS = 2 * HOUR_MS;
/** A session's last use is written at most this often: a console page makes many requests. */
const TOUCH_EVERY_MS = 60_000;
const FAILURE_WINDOW_MS = 15 * 60_000;
const MAX_FAILURES = 10;
export const MIN_PASSWORD_LENGTH = 12;
/** An address a console user may have: loose on purpose, so `owner@localhost` (the first start's user) is one too. */
export const EMAIL_ADDRESS = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** Who a console session acts for. */
export interface ConsoleIdentity {
  userId: string;
  customerId: string;
  email: string;
  role: string;
}

const newToken = (): string => randomBytes(32).toString('base64url');
const iso = (ms: number): string => new Date(ms).toISOString();

const wrongCredentials = () => new AppError('unauthorized', 'Wrong email or password');

/** Console users, their one-time welcome links and their sessions (README, The console). Tokens are kept only as SHA-256 hashes. */
export class ConsoleAccounts {
  /** `dialect`: on PostgreSQL the store is shared by several nodes, whose sign-ins must be counted as one. */
  constructor(private readonly parts: { db: Db; hasher: PasswordHasher; dialect: Dialect }) {}

  /**
   * Adds a user to a customer and returns a welcome token (one use; 24 h from a command, 72 h for
   * an invitation). For an address the customer already has, a fresh link replaces the old one (a
   * forgotten password) and `role`, when given, becomes theirs; another customer's address is
   * refused. The change and its audit record are one transaction.
   */
  async invite(
    customerId: string,
    email: string,
    options: { role?: string; ttlMs?: number; audit: Audit },
  ): Promise<{ userId: string; token: string; expiresAt: string; created: boolean }> {
    const address = email.trim().toLowerCase();
    const token = newToken();
    const expiresAt = iso(Date.now() + (options.ttlMs ?? WELCOME_TTL_MS));
    const existing = await findUserByEmail(this.parts.db, address);
    if (existing && existing.customer_id !== customerId)
      throw new AppError('invalid_state', `${address} already belongs to another customer`);
    return this.parts.db.transaction().execute(async (trx) => {
      if (existing) {
        await setWelcome(trx, existing.id, secretDigest(token), expiresAt, options.role);
        await options.audit(trx, {
          action: 'user.invited_again',
          target: { type: 'user', id: existing.id },
          changes: options.role && options.role !== existing.role ? ['invitation', 'role'] : ['invitation'],
        });
        return { userId: existing.id, token, expiresAt, created: false };
      }
      const userId = newId();
      await insertUser(trx, {
        id: userId,
        customer_id: customerId,
        email: address,
        password_hash: null,
        welcome_hash: secretDigest(token),
        welcome_expires_at: expiresAt,
        created_at: iso(Date.now()),
        last_sign_in_at: null,
        role: options.role ?? 'owner',
      });
      await options.audit(trx, {
        action: 'user.invited',
        target: { type: 'user', id: userId },
        changes: ['email', 'role'],
      });
      return { userId, token, expiresAt, created: true };
    });
  }

  /** Sets the password with a welcome token (once) and signs in; returns the session token. */
  async welcome(token: string, password: string, auditFor: AuditFor): Promise<string> {
    const hash = secretDigest(token);
    const user = await findUserByWelcome(this.parts.db, hash);
    const refused = new AppError(
      'unauthorized',
      'This link is unknown, used or expired; ask whoever invited you for a new one (an admin sends it from Users)',
    );
    if (!user?.welcome_expires_at || Date.parse(user.welcome_expires_at) <= Date.now()) throw refused;
    const audit = auditFor({ customerId: user.customer_id, userId: user.id, email: user.email });
    const recordIt = (trx: Trx) =>
      audit(trx, { action: 'user.password_set', target: { type: 'user', id: user.id }, changes: ['password'] });
    if (!(await claimWelcome(this.parts.db, user.id, hash, await this.parts.hasher.hash(password), recordIt)))
      throw refused;
    return this.open({ userId: user.id, customerId: user.customer_id });
  }

  /**
   * Checks a password, refusing for 15 minutes an email or address (an IPv6 one by its /56) that
   * failed 10 times. The attempt is counted before its password is checked, in one step with the
   * count, so parallel attempts cannot all pass it. An unknown email costs the same hash as a
   * wrong password and gets the same answer; a hash of an older cost is replaced on success.
   */
  async signIn(email: string, password: string, clientAddress: string): Promise<string> {
    const address = email.trim().toLowerCase();
    const now = Date.now();
    const since = iso(now - FAILURE_WINDOW_MS);
    const attempt = { id: newId(), email: address, address: limitAddressOf(clientAddress), at: iso(now) };
    await inSignInLedger(this.parts.db, this.parts.dialect, async (trx) => {
      const { byEmail, byAddress } = await countAttempts(trx, attempt.email, attempt.address, since);
      const blocking = [byEmail, byAddress]
        .filter((times) => times.length >= MAX_FAILURES)
        .map((times) => times[times.length - MAX_FAILURES]!);
      if (blocking.length) {
        const free = Math.max(...blocking.map((at) => Date.parse(at) + FAILURE_WINDOW_MS));
        throw new AppError(
          'rate_limited',
          'Too many failed sign-ins; retry after the time in Retry-After',
          undefined,
          Math.max(Math.ceil((free - now) / 1000), 1),
        );
      }
      await noteAttempt(trx, attempt, since);
    });
    const user = await findUserByEmail(this.parts.db, address);
    const verdict = await this.parts.hasher.verify(password, user?.password_hash).catch(async (err: unknown) => {
      // Not checked (the hashing queue was full): no guess was made.
      await forgetAttempt(this.parts.db, attempt.id);
      throw err;
    });
    if (!user?.password_hash || !verdict.matches) throw wrongCredentials();
    await forgetAttempt(this.parts.db, attempt.id);
    if (verdict.stale) await this.upgrade(user.id, user.password_hash, password);
    return this.open({ userId: user.id, customerId: user.customer_id });
  }

  /**
   * Signs in the person an identity provider vouched for (README, Your team): a user, or someone
   * whose invitation still holds (it is used up); null for anyone else. Returns the session token.
   */
  async signInVerified(email: string, auditFor: AuditFor): Promise<string | null> {
    const user = await findUserByEmail(this.parts.db, email);
    if (!user) return null;
    if (isInvited(user)) {
      if (!user.welcome_expires_at || Date.parse(user.welcome_expires_at) <= Date.now()) return null;
      const audit = auditFor({ customerId: user.customer_id, userId: user.id, email: user.email });
      const entry = {
        action: 'user.invitation_accepted',
        target: { type: 'user', id: user.id },
        changes: ['invitation'],
      };
      await recorded(inTransaction(this.parts.db), audit, entry, (trx) => acceptInvitation(trx, user.id));
    }
    return this.open({ userId: user.id, customerId: user.customer_id });
  }

  /** The identity behind a session token, or null when unknown or past its idle or absolute end. */
  async identify(token: string): Promise<ConsoleIdentity | null> {
    const hash = secretDigest(token);
    const row = await findSession(this.parts.db, hash);
    if (!row) return null;
    const now = Date.now();
    const lastSeen = Date.parse(row.last_seen_at);
    if (Date.parse(row.expires_at) <= now || lastSeen + SESSION_IDLE_MS <= now) {
      await deleteSession(this.parts.db, hash);
      return null;
    }
    if (now - lastSeen >= TOUCH_EVERY_MS) await touchSession(this.parts.db, hash, iso(now));
    return { userId: row.user_id, customerId: row.customer_id, email: row.email, role: row.role };
  }

  /**
   * Whether a session still holds (not signed out, past its end or idle), without counting as
   * its use: a stream left open must not keep an unattended console signed in.
   */
  async holds(token: string): Promise<boolean> {
    const row = await findSession(this.parts.db, secretDigest(token));
    const now = Date.now();
    return (
      row !== undefined && Date.parse(row.expires_at) > now && Date.parse(row.last_seen_at) + SESSION_IDLE_MS > now
    );
  }

  /** The signed-in user (the fields README, The console lists), for the console's header; null when the session is not valid. */
  async whoIs(
    token: string,
  ): Promise<{ id: string; email: string; created_at: string; last_sign_in_at: string | null; role: string } | null> {
    const who = await this.identify(token);
    const user = who && (await findUserById(this.parts.db, who.userId));
    return user
      ? {
          id: user.id,
          email: user.email,
          created_at: user.created_at,
          last_sign_in_at: user.last_sign_in_at,
          role: user.role,
        }
      : null;
  }

  async signOut(token: string): Promise<void> {
    await deleteSession(this.parts.db, secretDigest(token));
  }

  /** Best effort: with the hashing queue full it waits for the next sign-in. */
  private async upgrade(userId: string, from: string, password: string): Promise<void> {
    let to: string;
    try {
      to = await this.parts.hasher.hash(password);
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_limited') return;
      throw err;
    }
    await rehashPassword(this.parts.db, userId, from, to);
  }

  private async open(who: Pick<ConsoleIdentity, 'userId' | 'customerId'>): Promise<string> {
    const token = newToken();
    const now = Date.now();
    await openSession(
      this.parts.db,
      {
        token_hash: secretDigest(token),
        user_id: who.userId,
        customer_id: who.customerId,
        created_at: iso(now),
        last_seen_at: iso(now),
        expires_at: iso(now + SESSION_ABSOLUTE_MS),
      },
      iso(now),
    );
    return token;
  }
}

/** The link a new user opens to choose a password. */
export const welcomeLink = (baseUrl: string, token: string): string =>
  `${baseUrl.replace(/\/$/, '')}/console/#/welcome/${token}`;
