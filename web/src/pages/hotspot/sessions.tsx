/** Hotspot: sessions (issue 21), filled in by its own change. */
import type { TabProps } from '../hotspot.js';

export function Sessions(_props: TabProps) {
  return <p>Sessions</p>;
}
