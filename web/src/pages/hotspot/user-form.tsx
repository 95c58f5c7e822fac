/**
 * Creating a hotspot user (`/hotspot/users/new`), and the form pieces the detail page reuses: the
 * info fields and the password input. Each field is checked as the API checks it before anything is
 * sent; what the API still refuses (a taken name, an unknown profile) is shown with its own message.
 */
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useServices } from '../../context.js';
import { navigate } from '../../location.js';
import { ErrorMessage, Field, Link, valueOf, type InputEvent } from '../../ui.js';
import { INFO_FIELDS, infoProblem, passwordProblem, usernameProblem, type InfoKey, type UserType } from './user-checks.js';
import { ProfileChoice } from './user-profiles.js';

export type InfoValues = Partial<Record<InfoKey, string>>;
export type Problems = Record<string, string | undefined>;

let flash: string | undefined;

/** Keeps the API's message of a change that leaves the page (create, delete) for the next page. */
export function setFlash(message: string | undefined): void {
  flash = message;
}

/** A message for the next page to show once (the API's own "created" message after a create). */
export function takeFlash(): string | undefined {
  const f = flash;
  flash = undefined;
  return f;
}

/** The problems of the info fields, by key. */
export function infoProblems(values: InfoValues): Problems {
  const out: Problems = {};
  for (const f of INFO_FIELDS) out[f.key] = infoProblem(f.key, values[f.key] ?? '');
  return out;
}

/** Moves the focus to the first field marked invalid, so a keyboard user lands on what to fix. */
export function useFocusFirstInvalid(): [RefObject<HTMLFormElement | null>, () => void] {
  const form = useRef<HTMLFormElement>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (tick) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [tick]);
  return [form, () => setTick((t) => t + 1)];
}

/** The optional info fields: the usual ones shown, the rest behind "More details". */
export function InfoFields({
  values,
  problems,
  onChange,
}: {
  values: InfoValues;
  problems: Problems;
  onChange: (key: InfoKey, value: string) => void;
}) {
  const field = (f: (typeof INFO_FIELDS)[number]) => (
    <Field key={f.key} label={f.label} error={problems[f.key]}>
      {(id, d) => {
        const common = {
          id,
          name: f.key,
          autocomplete: 'off',
          maxLength: f.max,
          'aria-describedby': d,
          'aria-invalid': problems[f.key] ? true : undefined,
          value: values[f.key] ?? '',
          onInput: (e: InputEvent) => onChange(f.key, valueOf(e)),
        };
        // One element per type: Preact's typings tie each input type to its own attributes.
        const type = 'type' in f ? f.type : 'text';
        if (type === 'email') return <input type="email" {...common} />;
        if (type === 'tel') return <input type="tel" {...common} />;
        if (type === 'date') return <input type="date" {...common} />;
        return <input type="text" {...common} />;
      }}
    </Field>
  );
  const more = INFO_FIELDS.filter((f) => !('main' in f));
  const moreFilled = more.some((f) => values[f.key] || problems[f.key]);
  return (
    <>
      <div class="user-fields">{INFO_FIELDS.filter((f) => 'main' in f).map(field)}</div>
      <details class="user-more" open={moreFilled || undefined}>
        <summary>More details</summary>
        <div class="user-fields">{more.map(field)}</div>
      </details>
    </>
  );
}

/** A password input with a "show" switch (operators often read it out to the customer). */
export function PasswordInput({
  id,
  describedBy,
  invalid,
  value,
  onInput,
  required,
}: {
  id: string;
  describedBy?: string;
  invalid: boolean;
  value: string;
  onInput: (v: string) => void;
  required?: boolean;
}) {
  const [shown, setShown] = useState(false);
  const common = {
    id,
    name: 'password',
    autocomplete: 'new-password',
    spellcheck: false,
    maxLength: 128,
    required,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
    value,
    onInput: (e: InputEvent) => onInput(valueOf(e)),
  };
  return (
    <div class="password-input">
      {shown ? <input type="text" {...common} /> : <input type="password" {...common} />}
      <button type="button" aria-pressed={shown} onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Show'}
        <span class="visually-hidden"> password</span>
      </button>
    </div>
  );
}

const TYPES: Array<{ id: UserType; label: string; hint: string }> = [
  { id: 'user', label: 'User name and password', hint: 'Signs in with its password.' },
  { id: 'mac', label: 'MAC address', hint: 'The device is let in by its MAC; no password.' },
  { id: 'pin', label: 'PIN', hint: 'Signs in with the PIN as name and password; no password stored.' },
];

export function UserCreate() {
  const { api } = useServices();
  const [usertype, setUsertype] = useState<UserType>('user');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [profiles, setProfiles] = useState<string[]>([]);
  const [disabled, setDisabled] = useState(false);
  const [info, setInfo] = useState<InfoValues>({});
  const [problems, setProblems] = useState<Problems>({});
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const [form, focusInvalid] = useFocusFirstInvalid();

  const check = (): Problems => ({
    username: usernameProblem(usertype, username),
    password: usertype === 'user' ? passwordProblem(password) : undefined,
    ...infoProblems(info),
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    const found = check();
    setProblems(found);
    if (Object.values(found).some(Boolean)) {
      focusInvalid();
      return;
    }
    setBusy(true);
    setError(undefined);
    const body: Record<string, unknown> = { usertype, username };
    if (usertype === 'user') body.password = password;
    if (profiles.length) body.profiles = profiles.join(',');
    if (disabled) body.disabled = true;
    for (const f of INFO_FIELDS) if (info[f.key]) body[f.key] = info[f.key];
    try {
      const res = await api.send<{ id: string }>('hotspot', 'POST', '/users', body);
      setFlash(res.message);
      navigate(`/hotspot/users/${res.result.id}`);
    } catch (err) {
      setError(err as Error);
      setBusy(false);
    }
  };

  // A problem disappears as soon as the field is fixed, not only at the next submit.
  const recheck = (key: string, problem: string | undefined) => {
    if (problems[key] && !problem) setProblems({ ...problems, [key]: undefined });
  };

  return (
    <section aria-labelledby="new-user-title">
      <p class="crumbs">
        <Link href="/hotspot/users">← Users</Link>
      </p>
      <h2 id="new-user-title">New user</h2>
      <form ref={form} class="panel user-form" noValidate onSubmit={(e) => void submit(e)} aria-labelledby="new-user-title">
        <fieldset class="user-type">
          <legend>Signs in by</legend>
          {TYPES.map((t) => (
            <label key={t.id} class="choice">
              <input
                type="radio"
                name="usertype"
                value={t.id}
                checked={usertype === t.id}
                onChange={() => {
                  setUsertype(t.id);
                  setProblems({ ...problems, username: undefined, password: undefined });
                }}
              />
              <span>
                {t.label} <small class="hint">{t.hint}</small>
              </span>
            </label>
          ))}
        </fieldset>
        <div class="user-fields">
          <Field
            label={usertype === 'mac' ? 'MAC address' : usertype === 'pin' ? 'PIN' : 'User name'}
            hint={
              usertype === 'mac'
                ? 'Any notation: aa:bb:cc:dd:ee:ff, AA-BB-…, aabb.ccdd.eeff; stored as AA-BB-CC-DD-EE-FF'
                : 'Letters, digits and @ . _ : / - (at most 64)'
            }
            error={problems.username}
          >
            {(id, d) => (
              <input
                id={id}
                name="username"
                autocomplete="off"
                spellcheck={false}
                required
                aria-describedby={d}
                aria-invalid={problems.username ? true : undefined}
                value={username}
                onInput={(e) => {
                  setUsername(valueOf(e));
                  recheck('username', usernameProblem(usertype, valueOf(e)));
                }}
              />
            )}
          </Field>
          {usertype === 'user' && (
            <Field label="Password" error={problems.password} hint="At most 128 characters">
              {(id, d) => (
                <PasswordInput
                  id={id}
                  describedBy={d}
                  required
                  invalid={Boolean(problems.password)}
                  value={password}
                  onInput={(v) => {
                    setPassword(v);
                    recheck('password', passwordProblem(v));
                  }}
                />
              )}
            </Field>
          )}
        </div>
        <ProfileChoice selected={profiles} onChange={setProfiles} />
        <label class="choice">
          <input type="checkbox" name="disabled" checked={disabled} onChange={(e) => setDisabled(e.currentTarget.checked)} />
          <span>Create disabled (FreeRADIUS rejects the user until it is enabled)</span>
        </label>
        <h3>About the user</h3>
        <InfoFields
          values={info}
          problems={problems}
          onChange={(k, v) => {
            setInfo({ ...info, [k]: v });
            recheck(k, infoProblem(k, v));
          }}
        />
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="button" onClick={() => navigate('/hotspot/users')}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create user'}
          </button>
        </div>
      </form>
    </section>
  );
}
