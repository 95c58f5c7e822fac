/** Hotspot: quota (issue 21), filled in by its own change. */
import type { TabProps } from '../hotspot.js';

export function Quota(_props: TabProps) {
  return <p>Quota</p>;
}
