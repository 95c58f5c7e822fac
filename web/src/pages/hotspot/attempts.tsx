/** Hotspot: attempts (issue 21), filled in by its own change. */
import type { TabProps } from '../hotspot.js';

export function Attempts(_props: TabProps) {
  return <p>Attempts</p>;
}
