/** Metric names shared by the registry (metrics.ts) and `netsvc status`, which reads them without loading prom-client. */
import type { CounterName } from '../collector/decode/collector-counters.js';

/** Metric name prefix of the flow counters. */
export const FLOW_METRIC_PREFIX = 'netsvc_flow_';

/** Metric name prefix of the syslog receiver's counters. */
export const SYSLOG_METRIC_PREFIX = 'netsvc_syslog_';

/** `templatesAdded` → `netsvc_flow_templates_added_total`. */
export function flowMetricName(counter: CounterName): string {
  const snake = counter.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  // `packets` would read as export packets next to `packets_in_flows`: name it for what it counts.
  return `${FLOW_METRIC_PREFIX}${snake === 'packets' ? 'datagrams' : snake}_total`;
}
