/**
 * One hotspot user (`/hotspot/users/<id>`): its details edited (POST /hotspot/users/{id} with only
 * what changed), enabled or disabled, deleted after a confirmation naming it; its profiles and its
 * own access attributes below.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useServices } from '../../context.js';
import { useLoad } from '../../hooks.js';
import { navigate } from '../../location.js';
import { Busy, Confirm, ErrorMessage, Field, Link, Notice, valueOf } from '../../ui.js';
import { UserAccessAttributes } from './user-access.js';
import {
  INFO_FIELDS,
  infoProblem,
  passwordProblem,
  renameProblem,
  typeLabel,
  type InfoKey,
  type UserDetail,
} from './user-checks.js';
import {
  InfoFields,
  infoProblems,
  PasswordInput,
  setFlash,
  takeFlash,
  useFocusFirstInvalid,
  type InfoValues,
  type Problems,
} from './user-form.js';
import { UserProfiles } from './user-profiles.js';

function BackToUsers() {
  return (
    <p class="crumbs">
      <Link href="/hotspot/users">← Users</Link>
    </p>
  );
}

function infoOf(user: UserDetail): InfoValues {
  const out: InfoValues = {};
  for (const f of INFO_FIELDS) out[f.key] = user[f.key] ?? '';
  return out;
}

/** The details form: only the fields that changed are sent; a cleared field is sent as null. */
function EditUser({
  user,
  onSaving,
  onSaved,
}: {
  user: UserDetail;
  onSaving: () => void;
  onSaved: (message: string | undefined) => void;
}) {
  const { api } = useServices();
  const [username, setUsername] = useState(user.username);
  const [password, setPassword] = useState('');
  const [info, setInfo] = useState<InfoValues>(() => infoOf(user));
  const [problems, setProblems] = useState<Problems>({});
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const [form, focusInvalid] = useFocusFirstInvalid();
  const hasPassword = user.usertype === 'Username-Password';

  const changes = (): Record<string, unknown> => {
    const body: Record<string, unknown> = {};
    if (username !== user.username) body.username = username;
    if (password) body.password = password;
    for (const f of INFO_FIELDS) {
      const now = info[f.key] ?? '';
      if (now !== (user[f.key] ?? '')) body[f.key] = now === '' ? null : now;
    }
    return body;
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: Problems = {
      username: username !== user.username ? renameProblem(user.usertype, username) : undefined,
      password: password ? passwordProblem(password) : undefined,
      ...infoProblems(info),
    };
    setProblems(found);
    if (Object.values(found).some(Boolean)) {
      focusInvalid();
      return;
    }
    const body = changes();
    if (Object.keys(body).length === 0) {
      setError(new Error('Nothing has changed.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    onSaving();
    try {
      const res = await api.send('hotspot', 'POST', `/users/${user.id}`, body);
      setPassword('');
      onSaved(res.message);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form ref={form} class="panel user-form" noValidate onSubmit={(e) => void submit(e)} aria-labelledby="user-edit-title">
      <h3 id="user-edit-title">Details</h3>
      <div class="user-fields">
        <Field
          label="User name"
          error={problems.username}
          hint="Renaming keeps the user's rows; its history stays under the old name"
        >
          {(id, d) => (
            <input
              id={id}
              name="username"
              autocomplete="off"
              spellcheck={false}
              aria-describedby={d}
              aria-invalid={problems.username ? true : undefined}
              value={username}
              onInput={(e) => setUsername(valueOf(e))}
            />
          )}
        </Field>
        {hasPassword && (
          <Field label="New password" error={problems.password} hint={`Now ${user.password ?? '(none)'}; leave empty to keep it`}>
            {(id, d) => (
              <PasswordInput
                id={id}
                describedBy={d}
                invalid={Boolean(problems.password)}
                value={password}
                onInput={(v) => {
                  setPassword(v);
                  if (problems.password && !passwordProblem(v)) setProblems({ ...problems, password: undefined });
                }}
              />
            )}
          </Field>
        )}
      </div>
      <InfoFields
        values={info}
        problems={problems}
        onChange={(k: InfoKey, v) => {
          setInfo({ ...info, [k]: v });
          if (problems[k] && !infoProblem(k, v)) setProblems({ ...problems, [k]: undefined });
        }}
      />
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save changes'}
        </button>
      </div>
    </form>
  );
}

export function UserDetailPage({ userId }: { userId: number }) {
  const { api } = useServices();
  const user = useLoad(
    async (signal) => (await api.get<UserDetail[]>('hotspot', `/users/${userId}`, undefined, signal)).result[0],
    [userId],
  );
  const [message, setMessage] = useState<string | undefined>(takeFlash);
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  // After a save of the details, a new form once the user is read again, so it shows what the API
  // stored; other reloads (a profile attached) leave the form and any unsaved edits alone.
  const [formKey, setFormKey] = useState(0);
  const renew = useRef(false);
  useEffect(() => {
    if (renew.current && !user.loading) {
      renew.current = false;
      setFormKey((k) => k + 1);
    }
  }, [user.data, user.loading]);

  const u = user.data;
  const changed = (text: string | undefined, newForm: boolean) => {
    setMessage(text);
    setError(undefined);
    renew.current = newForm;
    user.reload();
  };

  const setDisabled = async (disabled: boolean) => {
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      const res = await api.send('hotspot', 'POST', `/users/${userId}`, { disabled });
      changed(res.message, false);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setConfirmDelete(false);
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      const res = await api.send('hotspot', 'DELETE', `/users/${userId}`);
      setFlash(res.message);
      navigate('/hotspot/users');
    } catch (err) {
      setError(err as Error);
      setBusy(false);
    }
  };

  if (!u) {
    return (
      <section>
        <BackToUsers />
        <ErrorMessage error={user.error} onRetry={user.reload} />
        <Busy when={user.loading} />
      </section>
    );
  }
  return (
    <section aria-labelledby="user-title" class="user-detail">
      <BackToUsers />
      <div class="users-head">
        <h2 id="user-title">
          {u.username} <span class={u.disabled ? 'state-off' : 'state-on'}>{u.disabled ? 'Disabled' : 'Enabled'}</span>
        </h2>
        <div class="actions-inline">
          <button type="button" disabled={busy} onClick={() => void setDisabled(!u.disabled)}>
            {u.disabled ? 'Enable' : 'Disable'}
          </button>
          <button type="button" class="danger" disabled={busy} onClick={() => setConfirmDelete(true)}>
            Delete…
          </button>
        </div>
      </div>
      <dl class="user-facts">
        <div>
          <dt>ID</dt>
          <dd>{u.id}</dd>
        </div>
        <div>
          <dt>Signs in by</dt>
          <dd>{typeLabel(u.usertype)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            {u.createddate} by {u.createdby}
          </dd>
        </div>
        {u.updateddate && (
          <div>
            <dt>Updated</dt>
            <dd>
              {u.updateddate} by {u.updatedby}
            </dd>
          </div>
        )}
      </dl>
      {message && <Notice>{message}</Notice>}
      <ErrorMessage error={error} />
      <ErrorMessage error={user.error} onRetry={user.reload} />
      <div class="user-columns">
        <EditUser
          key={`${u.id}-${formKey}`}
          user={u}
          onSaving={() => setMessage(undefined)}
          onSaved={(text) => changed(text, true)}
        />
        <div>
          <UserProfiles userId={u.id} username={u.username} profile={u.profile} onChanged={user.reload} />
          <UserAccessAttributes userId={u.id} username={u.username} />
        </div>
      </div>
      <Confirm
        open={confirmDelete}
        title="Delete user"
        message={
          <>
            Delete <strong>{u.username}</strong>? FreeRADIUS will reject it at once; its profiles and attributes go with it, its
            session and login history stays.
          </>
        }
        confirmLabel={`Delete ${u.username}`}
        onConfirm={() => void remove()}
        onCancel={() => setConfirmDelete(false)}
      />
    </section>
  );
}
