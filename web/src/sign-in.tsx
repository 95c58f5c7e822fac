/** Sign-in with API id and secret: the page when nobody is signed in, a dialog when a token expired. */
import { useState } from 'preact/hooks';
import type { Session } from './session.js';
import { ErrorMessage, Field, valueOf } from './ui.js';

export function SignInForm({ session, reason }: { session: Session; reason?: string }) {
  const [apiId, setApiId] = useState(session.apiId ?? '');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await session.signIn(apiId.trim(), secret);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <form class="sign-in" onSubmit={(e) => void submit(e)} aria-label="Sign in">
      <h1>Sign in to netsvc</h1>
      {reason && <p class="notice">{reason}</p>}
      <Field label="API id" hint={reason ? 'The same user as before: sign out to change user.' : undefined}>
        {(id, describedBy) => (
          <input
            id={id}
            name="api_id"
            autocomplete="username"
            required
            readOnly={!!reason}
            aria-describedby={describedBy}
            value={apiId}
            onInput={(e) => setApiId(valueOf(e))}
            autofocus={!apiId}
          />
        )}
      </Field>
      <Field label="Secret">
        {(id) => (
          <input
            id={id}
            name="secret"
            type="password"
            autocomplete="current-password"
            required
            value={secret}
            onInput={(e) => setSecret(valueOf(e))}
            autofocus={!!apiId}
          />
        )}
      </Field>
      <ErrorMessage error={error} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      <p class="hint">
        An API id and secret come from <code>netsvc admin credentials issue ENTITY USER</code> on the server.
      </p>
    </form>
  );
}
