/** Hotspot: users (issue 21), filled in by its own change. */
import type { TabProps } from '../hotspot.js';

export function Users(_props: TabProps) {
  return <p>Users</p>;
}
