import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import { newId } from '../shared/random.js';
import { secretDigest } from '../shared/secret-digest.js';
import type { Db } from '../store/database.js';
import {
  claimWelcome,
  countFailures,
  deleteSession,
  findSession,
  findUserByEmail,
  findUserById,
  findUserByWelcome,
  insertUser,
  openSession,
  recordFailure,
  setWelcome,
  touchSession,
} from './console-account.repository.js';
import { decoyHash, hashPassword, verifyPassword } from './password.js';

const HOUR_MS = 3_600_000;
const WELCOME_TTL_MS = 24 * HOUR_MS;
export const SESSION_ABSOLUTE_MS = 12 * HOUR_MS;
const SESSION_IDLE_MS = 2 * HOUR_MS;
/** A session's last use is written at most this often: a console page makes many requests. */
const TOUCH_EVERY_MS = 60_000;
const FAILURE_WINDOW_MS = 15 * 60_000;
const MAX_FAILURES = 10;
export const MIN_PASSWORD_LENGTH = 12;

/** Who a console session acts for. */
export interface ConsoleIdentity {
  userId: string;
  customerId: string;
}

const newToken = (): string => randomBytes(32).toString('base64url');
const iso = (ms: number): string => new Date(ms).toISOString();

const wrongCredentials = () => new AppError('unauthorized', 'Wrong email or password');

/** Console users, their one-time welcome links and their sessions (contract §15). Tokens are kept only as SHA-256 hashes. */
export class ConsoleAccounts {
  constructor(private readonly db: Db) {}

  /**
   * Adds a user to a customer and returns a welcome token (24 h, one use). For an address the
   * customer already has, a fresh link replaces the old one (a forgotten password); another
   * customer's address is refused.
   */
  async invite(customerId: string, email: string): Promise<{ userId: string; token: string }> {
    const address = email.trim().toLowerCase();
    const token = newToken();
    const expires = iso(Date.now() + WELCOME_TTL_MS);
    const existing = await findUserByEmail(this.db, address);
    if (existing && existing.customer_id !== customerId) throw new AppError('invalid_request', `${address} already belongs to another customer`);
    if (existing) {
      await setWelcome(this.db, existing.id, secretDigest(token), expires);
      return { userId: existing.id, token };
    }
    const userId = newId();
    await insertUser(this.db, {
      id: userId,
      customer_id: customerId,
      email: address,
      password_hash: null,
      welcome_hash: secretDigest(token),
      welcome_expires_at: expires,
      created_at: iso(Date.now()),
      last_sign_in_at: null,
    });
    return { userId, token };
  }

  /** Sets the password with a welcome token (once) and signs in; returns the session token. */
  async welcome(token: string, password: string): Promise<string> {
    const hash = secretDigest(token);
    const user = await findUserByWelcome(this.db, hash);
    const refused = new AppError('unauthorized', 'This welcome link is unknown, used or expired; ask for a new one (npm run admin -- create-user)');
    if (!user?.welcome_expires_at || Date.parse(user.welcome_expires_at) <= Date.now()) throw refused;
    if (!(await claimWelcome(this.db, user.id, hash, await hashPassword(password)))) throw refused;
    return this.open({ userId: user.id, customerId: user.customer_id });
  }

  /**
   * Checks a password, refusing for 15 minutes an email or address that failed 10 times. An
   * unknown email costs the same hash as a wrong password and gets the same answer.
   */
  async signIn(email: string, password: string, clientAddress: string): Promise<string> {
    const address = email.trim().toLowerCase();
    const now = Date.now();
    const { byEmail, byAddress } = await countFailures(this.db, address, clientAddress, iso(now - FAILURE_WINDOW_MS));
    const blocking = [byEmail, byAddress].filter((times) => times.length >= MAX_FAILURES).map((times) => times[times.length - MAX_FAILURES]!);
    if (blocking.length) {
      const free = Math.max(...blocking.map((at) => Date.parse(at) + FAILURE_WINDOW_MS));
      throw new AppError('rate_limited', 'Too many failed sign-ins; retry after the time in Retry-After', undefined, Math.max(Math.ceil((free - now) / 1000), 1));
    }
    const user = await findUserByEmail(this.db, address);
    const matches = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
    if (!user?.password_hash || !matches) {
      await recordFailure(this.db, { id: newId(), email: address, address: clientAddress, at: iso(now) }, iso(now - FAILURE_WINDOW_MS));
      throw wrongCredentials();
    }
    return this.open({ userId: user.id, customerId: user.customer_id });
  }

  /** The identity behind a session token, or null when unknown or past its idle or absolute end. */
  async identify(token: string): Promise<ConsoleIdentity | null> {
    const hash = secretDigest(token);
    const row = await findSession(this.db, hash);
    if (!row) return null;
    const now = Date.now();
    const lastSeen = Date.parse(row.last_seen_at);
    if (Date.parse(row.expires_at) <= now || lastSeen + SESSION_IDLE_MS <= now) {
      await deleteSession(this.db, hash);
      return null;
    }
    if (now - lastSeen >= TOUCH_EVERY_MS) await touchSession(this.db, hash, iso(now));
    return { userId: row.user_id, customerId: row.customer_id };
  }

  /** The signed-in user (contract §15's fields), for the console's header; null when the session is not valid. */
  async whoIs(token: string): Promise<{ id: string; email: string; created_at: string; last_sign_in_at: string | null } | null> {
    const who = await this.identify(token);
    const user = who && (await findUserById(this.db, who.userId));
    return user ? { id: user.id, email: user.email, created_at: user.created_at, last_sign_in_at: user.last_sign_in_at } : null;
  }

  async signOut(token: string): Promise<void> {
    await deleteSession(this.db, secretDigest(token));
  }

  private async open(who: ConsoleIdentity): Promise<string> {
    const token = newToken();
    const now = Date.now();
    await openSession(
      this.db,
      { token_hash: secretDigest(token), user_id: who.userId, customer_id: who.customerId, created_at: iso(now), last_seen_at: iso(now), expires_at: iso(now + SESSION_ABSOLUTE_MS) },
      iso(now),
    );
    return token;
  }
}

/** The link a new user opens to choose a password. */
export const welcomeLink = (baseUrl: string, token: string): string => `${baseUrl.replace(/\/$/, '')}/console/#/welcome/${token}`;
