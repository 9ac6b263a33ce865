import type { Role } from '#protocol/roles';
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
  ACCOUNTS_PER_ADDRESS,
  type ConsoleUserRow,
  findSession,
  findTeamUserByEmail,
  findUserById,
  findUserByWelcome,
  findUsersByEmail,
  hasIdentity,
  insertUser,
  linkedUsers,
  linkIdentity,
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
import { type Audit, type AuditFor, auditEntry } from '../audit/audit-trail.js';
import { singleSignOnOf, singleSignOnOfEach } from './single-sign-on.repository.js';
import { type ProviderIdentity, SsoRefused } from './single-sign-on.js';

/** How someone signed in: recorded in the audit log with every sign-in. */
type SignInMethod = 'password' | 'single_sign_on';

/** Whether a console user may sign in with the identity provider: linked, not yet (their team takes it), or not at all. */
export type SingleSignOnState = 'linked' | 'linkable' | 'off';

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
  role: Role;
}

const newToken = (): string => randomBytes(32).toString('base64url');
const iso = (ms: number): string => new Date(ms).toISOString();

const wrongCredentials = () => new AppError('unauthorized', 'Wrong email or password');

/** Console users, their one-time welcome links and their sessions (README, The console). Tokens are kept only as SHA-256 hashes. */
export class ConsoleAccounts {
  /**
   * `dialect`: on PostgreSQL the store is shared by several nodes, whose sign-ins must be counted
   * as one. `issuer`: the identity provider of single sign-on (OIDC_ISSUER), if any.
   */
  constructor(
    private readonly parts: { db: Db; hasher: PasswordHasher; dialect: Dialect; issuer?: string | undefined },
  ) {}

  /**
   * Adds a user to a customer and returns a welcome token (one use; 24 h from a command, 72 h for
   * an invitation). For an address the customer already has, a fresh link replaces the old one (a
   * forgotten password) and `role`, when given, becomes theirs. An address may be in several teams,
   * each its own account: whether it is in another customer's says nothing here. The change and
   * its audit record are one transaction.
   */
  async invite(
    customerId: string,
    email: string,
    options: { role?: Role; ttlMs?: number; audit: Audit },
  ): Promise<{ userId: string; token: string; expiresAt: string; created: boolean }> {
    const address = email.trim().toLowerCase();
    const token = newToken();
    const expiresAt = iso(Date.now() + (options.ttlMs ?? WELCOME_TTL_MS));
    const existing = await findTeamUserByEmail(this.parts.db, customerId, address);
    if (!existing && (await findUsersByEmail(this.parts.db, address)).length >= ACCOUNTS_PER_ADDRESS)
      throw new AppError('invalid_state', `${address} cannot be in more than ${ACCOUNTS_PER_ADDRESS} teams`);
    return this.parts.db.transaction().execute(async (trx) => {
      if (existing) {
        await setWelcome(trx, existing.id, secretDigest(token), expiresAt, options.role);
        const changes = options.role && options.role !== existing.role ? ['invitation', 'role'] : ['invitation'];
        await options.audit(trx, auditEntry('user.invited_again', existing.id, { changes }));
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
      await options.audit(trx, auditEntry('user.invited', userId, { changes: ['email', 'role'] }));
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
    const recordIt = (trx: Trx) => audit(trx, auditEntry('user.password_set', user.id, { changes: ['password'] }));
    if (!(await claimWelcome(this.parts.db, user.id, hash, await this.parts.hasher.hash(password), recordIt)))
      throw refused;
    return this.open(user, 'password', audit);
  }

  /**
   * Checks a password, refusing for 15 minutes an email or address (an IPv6 one by its /56) that
   * failed 10 times. The attempt is counted before its password is checked, in one step with the
   * count, so parallel attempts cannot all pass it. An address in several teams is signed in to
   * the account whose password it is (the most recently used first); an unknown email costs the
   * same hash as a wrong password and gets the same answer; a hash of an older cost is replaced on
   * success. Every sign-in is recorded in its team's audit log, with how.
   */
  async signIn(email: string, password: string, clientAddress: string, auditFor: AuditFor): Promise<string> {
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
    const accounts = (await findUsersByEmail(this.parts.db, address)).filter((u) => u.password_hash);
    const verify = (hash: string | undefined) =>
      this.parts.hasher.verify(password, hash).catch(async (err: unknown) => {
        // Not checked (the hashing queue was full): no guess was made.
        await forgetAttempt(this.parts.db, attempt.id);
        throw err;
      });
    if (!accounts.length) await verify(undefined);
    for (const user of accounts) {
      const verdict = await verify(user.password_hash!);
      if (!verdict.matches) continue;
      await forgetAttempt(this.parts.db, attempt.id);
      if (verdict.stale) await this.upgrade(user.id, user.password_hash!, password);
      return this.open(
        user,
        'password',
        auditFor({ customerId: user.customer_id, userId: user.id, email: user.email }),
      );
    }
    throw wrongCredentials();
  }

  /**
   * Signs in the person an identity provider vouched for (README, Your team), only into a team
   * that takes single sign-on for their email's domain: the console user their subject is linked
   * to; else one whose invitation still holds (it is used up, and the subject linked to it from
   * then on). Anyone else is refused, saying why: an account that signs in with a password links
   * its subject by signing in with it once ({@link linkProvider}). Returns the session token.
   */
  async signInWithProvider(identity: ProviderIdentity, auditFor: AuditFor): Promise<string> {
    const { db } = this.parts;
    const domain = identity.email.slice(identity.email.lastIndexOf('@') + 1);
    const teams = async (users: ConsoleUserRow[]) => {
      const settings = await singleSignOnOfEach(
        db,
        users.map((u) => u.customer_id),
      );
      return users.filter((u) => {
        const taken = settings.get(u.customer_id);
        return taken?.enabled && taken.domains.includes(domain);
      });
    };
    const linked = await teams(await linkedUsers(db, identity.issuer, identity.subject));
    const known = linked[0];
    if (known) {
      const audit = auditFor({ customerId: known.customer_id, userId: known.id, email: known.email });
      return this.open(known, 'single_sign_on', audit);
    }
    const accounts = await teams(await findUsersByEmail(db, identity.email));
    const invited = accounts.find(
      (u) => isInvited(u) && u.welcome_expires_at && Date.parse(u.welcome_expires_at) > Date.now(),
    );
    if (invited) {
      const audit = auditFor({ customerId: invited.customer_id, userId: invited.id, email: invited.email });
      return this.open(invited, 'single_sign_on', audit, async (trx) => {
        await acceptInvitation(trx, invited.id);
        await linkIdentity(trx, { issuer: identity.issuer, subject: identity.subject, userId: invited.id });
        await audit(
          trx,
          auditEntry('user.invitation_accepted', invited.id, { changes: ['invitation', 'single_sign_on'] }),
        );
      });
    }
    if (accounts.length)
      throw new SsoRefused(
        'not_linked',
        `${identity.email} signs in with a password: it must sign in with it once and link the provider`,
      );
    throw new SsoRefused('not_invited', `${identity.email} is in no team that takes single sign-on for ${domain}`);
  }

  /**
   * Links the identity provider's subject to the console user signed in with `sessionToken` (a
   * sign-in that proved their password), when the provider verified that user's own address and
   * their team takes single sign-on for its domain: from then on it signs them in.
   */
  async linkProvider(sessionToken: string, identity: ProviderIdentity, auditFor: AuditFor): Promise<void> {
    const who = await this.identify(sessionToken);
    if (!who) throw new SsoRefused('failed', 'Linking needs a console session: sign in with your password first');
    if (who.email !== identity.email)
      throw new SsoRefused(
        'other_email',
        `The identity provider signed in ${identity.email}, not ${who.email}: link the provider with your own address`,
      );
    const domain = identity.email.slice(identity.email.lastIndexOf('@') + 1);
    const settings = await singleSignOnOf(this.parts.db, who.customerId);
    if (!settings.enabled || !settings.domains.includes(domain))
      throw new SsoRefused('not_invited', `Your team does not take single sign-on for ${domain}`);
    const audit = auditFor({ customerId: who.customerId, userId: who.userId, email: who.email });
    await this.parts.db.transaction().execute(async (trx) => {
      await linkIdentity(trx, { issuer: identity.issuer, subject: identity.subject, userId: who.userId });
      await audit(trx, auditEntry('user.single_sign_on_linked', who.userId, { changes: ['single_sign_on'] }));
    });
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
  async whoIs(token: string): Promise<{
    id: string;
    email: string;
    created_at: string;
    last_sign_in_at: string | null;
    role: Role;
    single_sign_on: SingleSignOnState;
  } | null> {
    const who = await this.identify(token);
    const user = who && (await findUserById(this.parts.db, who.userId));
    return user
      ? {
          id: user.id,
          email: user.email,
          created_at: user.created_at,
          last_sign_in_at: user.last_sign_in_at,
          role: user.role,
          single_sign_on: await this.#singleSignOn(user),
        }
      : null;
  }

  async #singleSignOn(user: ConsoleUserRow): Promise<SingleSignOnState> {
    const { db, issuer } = this.parts;
    if (!issuer) return 'off';
    if (await hasIdentity(db, user.id, issuer)) return 'linked';
    const settings = await singleSignOnOf(db, user.customer_id);
    const domain = user.email.slice(user.email.lastIndexOf('@') + 1);
    return settings.enabled && settings.domains.includes(domain) ? 'linkable' : 'off';
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

  /** A session for `user`, recorded in their team's audit log with how they signed in; `also` joins its transaction. */
  private async open(
    user: Pick<ConsoleUserRow, 'id' | 'customer_id'>,
    method: SignInMethod,
    audit: Audit,
    also?: (trx: Trx) => Promise<void>,
  ): Promise<string> {
    const token = newToken();
    const now = Date.now();
    await openSession(
      this.parts.db,
      {
        token_hash: secretDigest(token),
        user_id: user.id,
        customer_id: user.customer_id,
        created_at: iso(now),
        last_seen_at: iso(now),
        expires_at: iso(now + SESSION_ABSOLUTE_MS),
      },
      iso(now),
      async (trx) => {
        await also?.(trx);
        await audit(trx, auditEntry('user.signed_in', user.id, { detail: { method } }));
      },
    );
    return token;
  }
}

/** The link a new user opens to choose a password. */
export const welcomeLink = (baseUrl: string, token: string): string =>
  `${baseUrl.replace(/\/$/, '')}/console/#/welcome/${token}`;
