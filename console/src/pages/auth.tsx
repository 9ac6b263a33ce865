import { useState } from 'preact/hooks';
import { api, get, path } from '../api';
import { ActionForm, ErrorNote, Title, useAction, useLoad } from '../ui';

const MIN_PASSWORD = 12;

/** Why the identity provider's sign-in was refused, as `/console/sso/callback` names it. */
const SSO_REFUSALS: Record<string, string> = {
  not_invited:
    'That account is in no team here that signs in with it. Ask an admin of your team to invite its email address under Users, and an owner to turn single sign-on on for its domain.',
  not_linked:
    'Your account here signs in with its password. Sign in with it once, then link your identity provider with the button beside your address, top right.',
  other_email:
    'Your identity provider signed in another address than this account’s. Sign in to it there with the address you use here.',
  unverified_email: 'Your identity provider has not verified that email address, so it cannot sign you in here.',
  unavailable: 'Your identity provider could not be reached. Try again in a moment, or sign in with your password.',
  failed: 'The sign-in with your identity provider did not complete. Try again; if it keeps failing, tell your admin.',
};

export function SignIn({ onDone, refused }: { onDone(): Promise<void>; refused?: string | undefined }) {
  const sso = useLoad(() => get<{ enabled: boolean; name: string | null }>(path`/console/sso`), []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction(async () => {
    await api('POST', path`/console/session`, { email, password });
    await onDone();
  });
  return (
    <main class="center" id="main">
      <ActionForm class="card narrow" onRun={() => void action.start()}>
        <Title>Sign in to Concierge</Title>
        {refused && (
          <p class="warn" role="alert">
            {SSO_REFUSALS[refused] ?? SSO_REFUSALS.failed}
          </p>
        )}
        {sso.data?.enabled && (
          <>
            <a class="button primary" href="/console/sso/start">
              Sign in with {sso.data.name}
            </a>
            <p class="muted or">or with your email and password</p>
          </>
        )}
        <label>
          Email
          <input
            type="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <ErrorNote error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Sign in
        </button>
        <p class="muted">
          No account yet? Ask an admin of your team to invite you (Users), or the operator for a welcome link:{' '}
          <code>npm run admin -- create-user --customer ID --email you@example.com</code>
        </p>
      </ActionForm>
    </main>
  );
}

export function Welcome({ token, onDone }: { token: string; onDone(): Promise<void> }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const mismatch = again.length > 0 && again !== password;
  const action = useAction(async () => {
    await api('POST', path`/console/welcome`, { token, password });
    // The token is spent: take it out of the address bar and history.
    history.replaceState(null, '', '#/');
    await onDone();
    dispatchEvent(new HashChangeEvent('hashchange'));
  });
  return (
    <main class="center" id="main">
      <ActionForm class="card narrow" onRun={() => !mismatch && void action.start()}>
        <Title>Welcome to Concierge</Title>
        <p>Choose a password to finish setting up your account. This link works once.</p>
        <label>
          Password (at least {MIN_PASSWORD} characters)
          <input
            type="password"
            autocomplete="new-password"
            required
            minLength={MIN_PASSWORD}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <label>
          The same password again
          <input
            type="password"
            autocomplete="new-password"
            required
            value={again}
            aria-invalid={mismatch}
            onInput={(e) => setAgain(e.currentTarget.value)}
          />
        </label>
        {mismatch && <p class="warn">The two passwords differ.</p>}
        <ErrorNote error={action.error} />
        <button type="submit" class="primary" disabled={action.busy || mismatch}>
          Set password and sign in
        </button>
      </ActionForm>
    </main>
  );
}
