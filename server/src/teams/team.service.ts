import { type Audit, auditEntry } from '../audit/audit-trail.js';
import {
  type ConsoleUserRow,
  deleteUser,
  findTeamUserByEmail,
  isInvited,
  setRole,
} from '../console/console-account.repository.js';
import { type ConsoleAccounts, welcomeLink } from '../console/console-accounts.js';
import type { Db } from '../database.js';
import { AppError, invalidState, notFound } from '../errors.js';
import type { Principal } from '../http/principal.js';
import type { Dialect } from '../store/db.js';
import type { Role } from '#protocol/roles';
import { findTeamUser, listUsers, lockOwners } from './team.repository.js';

/** How long an invitation's link works (README, Your team). */
export const INVITATION_TTL_MS = 72 * 3_600_000;

/** A console user as `GET /api/v1/users` shows one. */
export interface TeamUser {
  id: string;
  email: string;
  role: string;
  /** `invited` until the link is used to choose a password. */
  status: 'active' | 'invited';
  invitation_expires_at: string | null;
  created_at: string;
  last_sign_in_at: string | null;
}

export const toTeamUser = (row: ConsoleUserRow): TeamUser => ({
  id: row.id,
  email: row.email,
  role: row.role,
  status: isInvited(row) ? 'invited' : 'active',
  invitation_expires_at: isInvited(row) ? row.welcome_expires_at : null,
  created_at: row.created_at,
  last_sign_in_at: row.last_sign_in_at,
});

const onlyOwners = (what: string) => new AppError('forbidden', `This needs the owner role: only an owner can ${what}`);

/**
 * The team of one customer (README, Your team): who is in it, with which role. Only an owner
 * grants, changes or removes the owner role, and the last owner stays; a removed user's sessions
 * end in the transaction that removes them, and their activity streams right after.
 */
export class TeamService {
  constructor(
    private readonly parts: {
      db: Db;
      dialect: Dialect;
      accounts: ConsoleAccounts;
      /** The service's address, for the invitation's link. */
      baseUrl: () => string;
      /** Ends what a removed user still holds open on this node. */
      onRemoved: (customerId: string, userId: string) => void;
    },
  ) {}

  async list(customerId: string): Promise<TeamUser[]> {
    return (await listUsers(this.parts.db, customerId)).map(toTeamUser);
  }

  /**
   * Invites `email` with `role`: a one-time link for 72 hours. Asking again for someone still
   * invited sends a fresh link; someone already in the team keeps their password (their role
   * changes with `update`). Whether the address is in another customer's team is neither asked
   * nor said: it becomes an account of this team alone.
   */
  async invite(
    by: Principal,
    input: { email: string; role: Role },
    audit: Audit,
  ): Promise<TeamUser & { invitation_url: string }> {
    if (input.role === 'owner' && by.role !== 'owner') throw onlyOwners('invite an owner');
    const email = input.email.trim().toLowerCase();
    const existing = await findTeamUserByEmail(this.parts.db, by.customerId, email);
    if (existing && !isInvited(existing))
      throw invalidState(`${email} is already in your team; change their role with PUT /api/v1/users/{id}`);
    if (existing?.role === 'owner' && by.role !== 'owner') throw onlyOwners("renew an owner's invitation");
    const { userId, token } = await this.parts.accounts.invite(by.customerId, email, {
      role: input.role,
      ttlMs: INVITATION_TTL_MS,
      audit,
    });
    const row = await findTeamUser(this.parts.db, by.customerId, userId);
    return { ...toTeamUser(row!), invitation_url: welcomeLink(this.parts.baseUrl(), token) };
  }

  /** Gives a user another role; the last owner keeps theirs. */
  async update(by: Principal, id: string, role: Role, audit: Audit): Promise<TeamUser> {
    const target = await this.member(by.customerId, id);
    if ((target.role === 'owner' || role === 'owner') && target.role !== role && by.role !== 'owner')
      throw onlyOwners(role === 'owner' ? 'make someone an owner' : "change an owner's role");
    if (target.role === role) return toTeamUser(target);
    await this.parts.db.transaction().execute(async (trx) => {
      const owners = await lockOwners(trx, by.customerId, this.parts.dialect);
      if (owners.length === 1 && owners[0] === id)
        throw invalidState('The last owner cannot be demoted: make someone else an owner first');
      await setRole(trx, id, role);
      await audit(trx, auditEntry('user.role_changed', id, { changes: ['role'] }));
    });
    return toTeamUser({ ...target, role });
  }

  /** Removes a user from the team: their sessions and activity streams end at once. */
  async remove(by: Principal, id: string, audit: Audit): Promise<{ id: string; deleted: true }> {
    const target = await this.member(by.customerId, id);
    if (target.role === 'owner' && by.role !== 'owner') throw onlyOwners('remove an owner');
    await this.parts.db.transaction().execute(async (trx) => {
      const owners = await lockOwners(trx, by.customerId, this.parts.dialect);
      if (owners.length === 1 && owners[0] === id)
        throw invalidState('The last owner cannot be removed: make someone else an owner first');
      await deleteUser(trx, id);
      await audit(trx, auditEntry('user.removed', id, { changes: ['email', 'role'] }));
    });
    this.parts.onRemoved(by.customerId, id);
    return { id, deleted: true };
  }

  private async member(customerId: string, id: string): Promise<ConsoleUserRow> {
    const row = await findTeamUser(this.parts.db, customerId, id);
    if (!row) throw notFound('User');
    return row;
  }
}
