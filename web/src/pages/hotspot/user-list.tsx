/**
 * The hotspot users list: the search the API takes (exact user name, or id) and its pages, all in the
 * URL (`/hotspot/users?username=alice&page=2`), newest first as the API answers.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useServices } from '../../context.js';
import { useLoad } from '../../hooks.js';
import { navigate, setParams } from '../../location.js';
import { Busy, DataTable, ErrorMessage, Field, Link, Notice, Pager, valueOf, type Column } from '../../ui.js';
import { profilesOf, typeLabel, type UserSummary } from './user-checks.js';
import { takeFlash } from './user-form.js';

const PER_PAGE = 25;

/** A link to a user's page. */
export function UserLink({ id, children }: { id: number | string; children: ComponentChildren }) {
  return <Link href={`/hotspot/users/${id}`}>{children}</Link>;
}

const COLUMNS: Column<UserSummary>[] = [
  { key: 'username', label: 'User name', render: (u) => <UserLink id={u.id}>{u.username}</UserLink> },
  {
    key: 'disabled',
    label: 'State',
    render: (u) => <span class={u.disabled ? 'state-off' : 'state-on'}>{u.disabled ? 'Disabled' : 'Enabled'}</span>,
  },
  { key: 'usertype', label: 'Sign-in', render: (u) => typeLabel(u.usertype) },
  { key: 'profile', label: 'Profiles', render: (u) => profilesOf(u.profile).join(', ') || '—' },
  { key: 'name', label: 'Name', render: (u) => [u.firstname, u.lastname].filter(Boolean).join(' ') || '—' },
  { key: 'email', label: 'Email', render: (u) => u.email || '—' },
  { key: 'mobile', label: 'Mobile', render: (u) => u.mobile || '—' },
  { key: 'id', label: 'ID', numeric: true },
];

export function UserList({ params }: { params: URLSearchParams }) {
  const { api } = useServices();
  const username = params.get('username') ?? '';
  const id = params.get('id') ?? '';
  const page = Math.max(1, Number(params.get('page')) || 1);
  const [nameInput, setNameInput] = useState(username);
  const [idInput, setIdInput] = useState(id);
  const [idError, setIdError] = useState<string>();
  const [flash] = useState(takeFlash);
  // Back and forward change the search in the URL: the inputs follow it.
  useEffect(() => {
    setNameInput(username);
    setIdInput(id);
  }, [username, id]);
  const list = useLoad(
    (signal) => api.get<UserSummary[]>('hotspot', '/users', { username, id, page, perPage: PER_PAGE }, signal),
    [username, id, page],
  );
  const search = (e: Event) => {
    e.preventDefault();
    const wantedId = idInput.trim();
    if (wantedId && !/^\d{1,10}$/.test(wantedId)) {
      setIdError('A user id is a whole number.');
      return;
    }
    setIdError(undefined);
    setParams({ username: nameInput.trim(), id: wantedId, page: null });
  };
  const searching = Boolean(username || id);
  return (
    <section aria-labelledby="users-title">
      <div class="users-head">
        <h2 id="users-title">Users</h2>
        <button type="button" class="primary" onClick={() => navigate('/hotspot/users/new')}>
          New user
        </button>
      </div>
      <form class="panel row" role="search" aria-label="Find users" onSubmit={search}>
        <Field label="User name (exact)" hint="A MAC user's name is its MAC as XX-XX-XX-XX-XX-XX">
          {(fid, d) => (
            <input
              id={fid}
              aria-describedby={d}
              name="username"
              value={nameInput}
              autocomplete="off"
              spellcheck={false}
              onInput={(e) => setNameInput(valueOf(e))}
            />
          )}
        </Field>
        <Field label="User ID" error={idError}>
          {(fid, d) => (
            <input
              id={fid}
              aria-describedby={d}
              aria-invalid={idError ? true : undefined}
              name="id"
              inputMode="numeric"
              size={8}
              value={idInput}
              onInput={(e) => setIdInput(valueOf(e))}
            />
          )}
        </Field>
        <div class="actions-inline">
          <button type="submit" class="primary">
            Search
          </button>
          {searching && (
            <button
              type="button"
              onClick={() => {
                setNameInput('');
                setIdInput('');
                setIdError(undefined);
                setParams({ username: null, id: null, page: null });
              }}
            >
              Show all
            </button>
          )}
        </div>
      </form>
      {flash && <Notice>{flash}</Notice>}
      <ErrorMessage error={list.error} onRetry={list.reload} />
      <Busy when={list.loading} />
      {list.data && (
        <>
          <DataTable
            caption={searching ? 'Users matching the search' : 'All users, newest first'}
            columns={COLUMNS}
            rows={list.data.result}
            rowKey={(u) => u.id}
            empty={searching ? 'No user matches the search.' : 'No users yet.'}
          />
          {!(page === 1 && list.data.isLastPage) && (
            <Pager
              page={page}
              isLastPage={list.data.isLastPage ?? true}
              busy={list.loading}
              onPage={(p) => setParams({ page: p === 1 ? null : String(p) })}
            />
          )}
        </>
      )}
    </section>
  );
}
