/** A flow source's settings (`flowSources.<name>` in the configuration). */
import type { TemplateLimits } from '../decode/template-cache.js';

/** A flow source's settings, as `flowSources.<name>` in the configuration holds them. */
export interface FlowSourceConfig {
  /** HOST:PORT or [V6]:PORT; port 0 picks an ephemeral port (tests). */
  listen: string;
  /** Exporter addresses this source claims on a shared port. */
  exporters?: readonly string[];
  /** SO_RCVBUF to ask for, bytes (default 8 MiB). */
  receiveBuffer?: number;
  /** Exporter address → sampling interval override. */
  sampling?: Readonly<Record<string, number>>;
  /** A template not re-announced for this long is forgotten (0 = never); default the listener's `templateTtlMs`. */
  templateTtlSec?: number;
  /** Data sets that came before their template are held this long at most (default 60). */
  pendingMaxAgeSec?: number;
  /** Data sets held at most while waiting for their template (default 1024). */
  pendingMaxSets?: number;
  /** Bytes of held data sets at most (default 8 MiB). */
  pendingMaxBytes?: number;
  /** Held data sets at most per exporter address (default 256). */
  pendingMaxSetsPerExporter?: number;
  /** Bounds of the template store (unset ones take DEFAULT_TEMPLATE_LIMITS). */
  templateLimits?: Partial<TemplateLimits>;
  /** Flow times before this ISO 8601 instant are implausible (default DEFAULT_VALUE_LIMITS). */
  minFlowTime?: string;
  /** Flow times more than this many seconds after receipt are implausible. */
  maxFutureSec?: number;
  /** Sampling intervals from the wire above this are refused. */
  maxSamplingInterval?: number;
}
