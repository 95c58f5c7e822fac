/**
 * Hotspot users (issue 21): the list at `/hotspot/users` (search and page in the query), a new user at
 * `/hotspot/users/new`, one user at `/hotspot/users/<id>`.
 */
import type { TabProps } from '../hotspot.js';
import { ErrorMessage } from '../../ui.js';
import { UserDetailPage } from './user-detail.js';
import { UserCreate } from './user-form.js';
import { UserList } from './user-list.js';
import './user-pages.css';

export function Users({ params, rest }: TabProps) {
  const [first] = rest;
  if (!first) return <UserList params={params} />;
  if (first === 'new') return <UserCreate />;
  if (/^\d{1,10}$/.test(first) && Number(first) > 0) return <UserDetailPage key={first} userId={Number(first)} />;
  return <ErrorMessage error={`'${first}' is not a user id: the address should be /hotspot/users/<number>.`} />;
}
