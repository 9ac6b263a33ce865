import { useState } from 'preact/hooks';
import { del, get, path, post, put } from '../api';
import { when } from '../format';
import { can, currentRole, grantable, type Role } from '../roles';
import type { Invitation, SingleSignOnSettings, TeamUser } from '../types';
import { ActionForm, Copy, Empty, ErrorNote, Loading, Title, useAction, useLoad } from '../ui';

/** What each role is for, in the words the invitation form shows. */
const ROLE_WORDS: Record<Role, string> = {
  agent: 'answers visitors: Inbox, Conversations, Analytics',
  editor: 'also builds: agents, deployments, knowledge, model endpoints',
  admin: 'also holds the API key, the team and the audit log',
  owner: 'everything, owners included',
};

function RoleOptions({ roles }: { roles: Role[] }) {
  return (
    <>
      {roles.map((role) => (
        <option key={role} value={role}>
          {role}: {ROLE_WORDS[role]}
        </option>
      ))}
    </>
  );
}

/** `#/users`: the team (README, Your team): invite with a role, change a role, remove. */
export function UsersPage() {
  const users = useLoad(() => get<TeamUser[]>(path`/api/v1/users`), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('agent');
  const [invited, setInvited] = useState<Invitation>();
  const invite = useAction(async () => {
    setInvited(await post<Invitation>(path`/api/v1/users`, { email, role }));
    setEmail('');
    users.reload();
  });
  const change = useAction(async (user: TeamUser, to: Role) => {
    await put(path`/api/v1/users/${user.id}`, { role: to });
    users.reload();
  });
  const remove = useAction(async (user: TeamUser) => {
    const what = user.status === 'invited' ? `Withdraw the invitation of ${user.email}?` : `Remove ${user.email}?`;
    if (!confirm(`${what} They are signed out at once.`)) return;
    await del(path`/api/v1/users/${user.id}`);
    users.reload();
  });
  // An owner's role is an owner's to change; nobody else is offered it. The last owner who is in
  // keeps the role (the service refuses otherwise), so their row offers nothing.
  const owners = users.data?.filter((u) => u.role === 'owner' && u.status === 'active') ?? [];
  const lastOwner = (user: TeamUser) => owners.length === 1 && owners[0]!.id === user.id;
  const mayChange = (user: TeamUser) => (user.role !== 'owner' || can('owner')) && !lastOwner(user);
  return (
    <section>
      <Title>Users</Title>
      <p>
        Who signs in to this console, and what each may do. A role counts from the person's next click; a removed person
        is signed out at once.
      </p>
      <ActionForm onRun={() => invite.start()}>
        <h2>Invite someone</h2>
        <div class="filters">
          <label>
            Email
            <input
              type="email"
              required
              maxLength={320}
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </label>
          <label>
            Their role
            <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              <RoleOptions roles={grantable()} />
            </select>
          </label>
          <button type="submit" disabled={invite.busy}>
            Invite
          </button>
        </div>
        <ErrorNote error={invite.error} />
        {invited && (
          <div class="secret" role="status">
            <p>
              <strong>Invitation link for {invited.email}</strong>: shown only now, works once, until{' '}
              {when(invited.invitation_expires_at)}. Send it to them; they choose a password with it.
            </p>
            <code>{invited.invitation_url}</code> <Copy text={invited.invitation_url} />
          </div>
        )}
      </ActionForm>
      <ErrorNote error={users.error ?? change.error ?? remove.error} />
      {users.loading && !users.data && <Loading what="the team" />}
      {users.data?.length === 0 && <Empty>Nobody signs in yet: invite the first person above.</Empty>}
      {!!users.data?.length && (
        <table>
          <caption class="sr-only">Users</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">
                <span class="sr-only">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.data.map((user) => (
              <tr key={user.id}>
                <td>{user.email}</td>
                <td>
                  {mayChange(user) ? (
                    <select
                      aria-label={`Role of ${user.email}`}
                      value={user.role}
                      disabled={change.busy}
                      onChange={(e) => change.start(user, e.currentTarget.value as Role)}
                    >
                      {grantable().map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : lastOwner(user) ? (
                    'owner (the only one)'
                  ) : (
                    user.role
                  )}
                </td>
                <td>
                  {user.status === 'invited' ? `invited, link until ${when(user.invitation_expires_at)}` : 'active'}
                </td>
                <td>{when(user.last_sign_in_at)}</td>
                <td>
                  {mayChange(user) && (
                    <button
                      type="button"
                      class="small danger"
                      aria-label={`Remove ${user.email}`}
                      disabled={remove.busy}
                      onClick={() => remove.start(user)}
                    >
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted">
        You are an {currentRole()}. Only an owner makes, changes or removes an owner, and a team always keeps one.
      </p>
      <SingleSignOn />
    </section>
  );
}

/**
 * Whether the service's identity provider signs people in to this team, and for which email
 * domains: offered only where the service has one, changed only by an owner.
 */
function SingleSignOn() {
  const settings = useLoad(() => get<SingleSignOnSettings>(path`/api/v1/settings/single-sign-on`), []);
  const [domains, setDomains] = useState<string>();
  const save = useAction(async (enabled: boolean) => {
    const list = (domains ?? settings.data?.domains.join(', ') ?? '').split(/[\s,]+/).filter(Boolean);
    await put(path`/api/v1/settings/single-sign-on`, { enabled, domains: list });
    setDomains(undefined);
    settings.reload();
  });
  const data = settings.data;
  if (!data?.provider) return null;
  const owner = can('owner');
  return (
    <ActionForm onRun={() => save.start(true)}>
      <h2>Single sign-on with {data.provider}</h2>
      <p>
        {data.enabled
          ? `On for ${data.domains.join(', ')}: people of your team with such an address sign in with ${data.provider}, once invited, or once they link it after signing in with their password (the button beside their address, top right).`
          : `Off: everyone signs in with their password. Turned on, ${data.provider} signs in people of your team whose address is in the domains you name, and no one else.`}
      </p>
      <div class="filters">
        <label class="grow">
          Email domains
          <input
            value={domains ?? data.domains.join(', ')}
            placeholder="harbor.example"
            disabled={!owner}
            onInput={(e) => setDomains(e.currentTarget.value)}
          />
        </label>
        {owner && (
          <>
            <button type="submit" disabled={save.busy}>
              {data.enabled ? 'Save' : 'Turn on'}
            </button>
            {data.enabled && (
              <button type="button" class="danger" disabled={save.busy} onClick={() => save.start(false)}>
                Turn off
              </button>
            )}
          </>
        )}
      </div>
      {!owner && <p class="muted">Only an owner turns single sign-on on or off.</p>}
      <ErrorNote error={save.error ?? settings.error} />
    </ActionForm>
  );
}
