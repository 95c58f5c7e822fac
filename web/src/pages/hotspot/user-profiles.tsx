/**
 * A user's profiles (FreeRADIUS groups): chosen from GET /hotspot/profiles when a user is created,
 * attached and detached one at a time on the user's page (attach-profile / detach-profile), in the
 * order FreeRADIUS applies them.
 */
import { useState } from 'preact/hooks';
import { useServices } from '../../context.js';
import { useLoad, type Loaded } from '../../hooks.js';
import { ErrorMessage, Field, Notice, valueOf } from '../../ui.js';
import { profilesOf } from './user-checks.js';

interface Profile {
  groupname: string;
  description: string;
}

/** The API's largest page: one request lists every profile a hotspot realistically has. */
const ALL = 2000;

function useProfiles(): Loaded<Profile[]> {
  const { api } = useServices();
  const loaded = useLoad(
    async (signal) => (await api.get<Profile[]>('hotspot', '/profiles', { perPage: ALL }, signal)).result,
    [],
  );
  return loaded;
}

function profileLabel(p: Profile): string {
  return p.description ? `${p.groupname} — ${p.description}` : p.groupname;
}

const NONE_YET = 'No profiles exist yet: make one with netsvc profile add NAME (or PUT /hotspot/profiles/NAME).';

/** Check boxes for the profiles of a new user, in the order they are ticked. */
export function ProfileChoice({ selected, onChange }: { selected: string[]; onChange: (names: string[]) => void }) {
  const profiles = useProfiles();
  return (
    <fieldset class="user-profile-choice">
      <legend>Profiles</legend>
      <ErrorMessage error={profiles.error} onRetry={profiles.reload} />
      {profiles.data?.length === 0 && <p class="hint">{NONE_YET}</p>}
      {profiles.data?.map((p) => (
        <label key={p.groupname} class="choice">
          <input
            type="checkbox"
            name="profiles"
            value={p.groupname}
            checked={selected.includes(p.groupname)}
            onChange={(e) =>
              onChange(e.currentTarget.checked ? [...selected, p.groupname] : selected.filter((n) => n !== p.groupname))
            }
          />
          <span>{profileLabel(p)}</span>
        </label>
      ))}
      {selected.length > 1 && (
        <p class="hint">FreeRADIUS applies them in this order: {selected.join(', ')}; an earlier one's value wins.</p>
      )}
    </fieldset>
  );
}

/** The profiles of an existing user: each with a Detach button, and a chooser to attach another. */
export function UserProfiles({
  userId,
  username,
  profile,
  onChanged,
}: {
  userId: number;
  username: string;
  profile: string | null;
  onChanged: () => void;
}) {
  const { api } = useServices();
  const profiles = useProfiles();
  const attached = profilesOf(profile);
  const available = (profiles.data ?? []).filter((p) => !attached.includes(p.groupname));
  const [choice, setChoice] = useState('');
  const [message, setMessage] = useState<string>();
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const picked = available.some((p) => p.groupname === choice) ? choice : (available[0]?.groupname ?? '');

  const act = async (action: 'attach-profile' | 'detach-profile', profileName: string) => {
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      const res = await api.send('hotspot', 'POST', `/users/${userId}/actions/${action}`, { profileName });
      setMessage(res.message);
      onChanged();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="user-profiles-title">
      <h3 id="user-profiles-title">Profiles</h3>
      {attached.length === 0 ? (
        <p class="hint">{username} has no profile: only its own attributes apply.</p>
      ) : (
        <ol class="user-profile-list" aria-label={`Profiles of ${username}, in the order FreeRADIUS applies them`}>
          {attached.map((name) => (
            <li key={name}>
              <span class="profile-name">{name}</span>
              <button type="button" disabled={busy} onClick={() => void act('detach-profile', name)}>
                Detach<span class="visually-hidden"> profile {name}</span>
              </button>
            </li>
          ))}
        </ol>
      )}
      <ErrorMessage error={profiles.error} onRetry={profiles.reload} />
      {profiles.data?.length === 0 && <p class="hint">{NONE_YET}</p>}
      {available.length > 0 && (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (picked) void act('attach-profile', picked);
          }}
        >
          <Field label="Profile to attach">
            {(id) => (
              <select id={id} name="profileName" value={picked} onChange={(e) => setChoice(valueOf(e))}>
                {available.map((p) => (
                  <option key={p.groupname} value={p.groupname}>
                    {profileLabel(p)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button type="submit" disabled={busy}>
            Attach
          </button>
        </form>
      )}
      {message && <Notice>{message}</Notice>}
      <ErrorMessage error={error} />
    </section>
  );
}
