/**
 * The hotspot area: one tab per task, the tab in the path (`/hotspot/users`, `/hotspot/sessions`, …)
 * and each tab's search in the query, so every view can be bookmarked.
 */
import type { ComponentType } from 'preact';
import { Link } from '../ui.js';
import { Attempts } from './hotspot/attempts.js';
import { Quota } from './hotspot/quota.js';
import { Sessions } from './hotspot/sessions.js';
import { Users } from './hotspot/users.js';

export interface TabProps {
  params: URLSearchParams;
  /** Path segments after the tab (e.g. a user id). */
  rest: string[];
}

const TABS: Array<{ id: string; label: string; page: ComponentType<TabProps> }> = [
  { id: 'users', label: 'Users', page: Users },
  { id: 'sessions', label: 'Sessions', page: Sessions },
  { id: 'attempts', label: 'Login attempts', page: Attempts },
  { id: 'quota', label: 'Quota purchases', page: Quota },
];

export default function HotspotPage({ path, params }: { path: string; params: URLSearchParams }) {
  const [, , tabId, ...rest] = path.split('/');
  const tab = TABS.find((t) => t.id === tabId) ?? TABS[0]!;
  const Page = tab.page;
  return (
    <>
      <h1 class="visually-hidden">Hotspot</h1>
      <nav class="tabs" aria-label="Hotspot">
        {TABS.map((t) => (
          <Link key={t.id} href={`/hotspot/${t.id}`} current={t === tab}>
            {t.label}
          </Link>
        ))}
      </nav>
      <Page params={params} rest={rest} />
    </>
  );
}
