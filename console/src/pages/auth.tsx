import { useState } from 'preact/hooks';
import { api, path } from '../api';
import { ActionForm, ErrorNote, Title, useAction } from '../ui';

const MIN_PASSWORD = 12;

export function SignIn({ onDone }: { onDone(): Promise<void> }) {
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
          No account yet? Ask for a welcome link:{' '}
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
