/**
 * A flow source's settings (`flowSources.<name>` in the configuration): the
 * schema, owned here with the listeners that use them; src/config.ts
 * composes it into the configuration. The defaults are those of
 * flow-source-defaults.ts, and the types are derived from the schema.
 */
import { z } from 'zod';
import { DEFAULT_FLOW_SOURCES, FLOW_SOURCE_DEFAULTS as D } from './flow-source-defaults.js';

const hostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/, 'must be HOST:PORT (IPv6 as [ADDR]:PORT)');

const templateLimitsSchema = z
  .object({
    /** A template with more fields is refused. */
    maxFieldsPerTemplate: z.number().int().positive(),
    /** Templates per observation domain. */
    maxTemplatesPerDomain: z.number().int().positive(),
    /** Observation domains (v9 source ids) per exporter address. */
    maxDomainsPerExporter: z.number().int().positive(),
    /** Templates per exporter address. */
    maxTemplatesPerExporter: z.number().int().positive(),
    /** Domains over all exporters of the source. */
    maxDomains: z.number().int().positive(),
    /** Templates over all exporters of the source. */
    maxTemplates: z.number().int().positive(),
    /** Template fields over all exporters of the source. */
    maxFields: z.number().int().positive(),
    /** Template budget refill per exporter, in fields per second. */
    budgetPerSec: z.number().positive(),
    /** Template budget per exporter at most, in fields. */
    budgetBurst: z.number().positive(),
  })
  .partial()
  .strict();

export const flowSourceSchema = z
  .object({
    /** Where the UDP listener binds: HOST:PORT or [V6]:PORT; port 0 picks an ephemeral port (tests). */
    listen: hostPort,
    /** Exporter addresses this source claims when several sources share a port. */
    exporters: z.array(z.string()).default(D.exporters),
    /** Socket receive buffer in bytes (SO_RCVBUF). */
    receiveBuffer: z.number().int().positive().default(D.receiveBuffer),
    /** Per-exporter sampling interval override, keyed by exporter address. */
    sampling: z.record(z.string(), z.number().int().positive()).default(D.sampling),
    /** A template not re-announced for this long is forgotten (0 = kept until replaced). */
    templateTtlSec: z.number().int().min(0).default(D.templateTtlSec),
    /** Data sets that came before their template are held this long at most. */
    pendingMaxAgeSec: z.number().int().positive().default(D.pendingMaxAgeSec),
    /** Data sets held at most while waiting for their template (0 = hold none). */
    pendingMaxSets: z.number().int().min(0).default(D.pendingMaxSets),
    /** Bytes of held data sets at most (each is a copy of up to 64 KiB). */
    pendingMaxBytes: z.number().int().min(0).default(D.pendingMaxBytes),
    /** Held data sets at most per exporter address, so one sender cannot push out the others'. */
    pendingMaxSetsPerExporter: z.number().int().positive().default(D.pendingMaxSetsPerExporter),
    /** Bounds of the template store; each is counted when hit (docs/netflow.md, "Hostile exporters"). */
    templateLimits: templateLimitsSchema.default(D.templateLimits),
    /** Flow times before this instant are implausible: replaced by the export time and counted (`timestampsClamped`). */
    minFlowTime: z
      .string()
      .regex(
        /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/,
        'must be an ISO 8601 date (UTC) or date-time with an offset, e.g. 1990-01-01',
      )
      .refine((t) => Number.isFinite(Date.parse(t)), 'must be a real date')
      .default(D.minFlowTime),
    /** Flow times later than this many seconds after the datagram's receipt are implausible, as above. */
    maxFutureSec: z.number().int().min(0).default(D.maxFutureSec),
    /** Sampling intervals from the wire above this are refused, not applied, and counted (`samplingRefused`). */
    maxSamplingInterval: z.number().int().min(1).max(0xffffffff).default(D.maxSamplingInterval),
  })
  .strict();

/** A flow source's settings with every default applied: what the listeners work with. */
export type FlowSourceConfig = z.output<typeof flowSourceSchema>;
/** A flow source's settings as given: `listen`, and whatever else differs from the defaults. */
export type FlowSourceSettings = z.input<typeof flowSourceSchema>;

// Beside the other defaults, so that the configuration's sources (src/config-sources.ts) are read without zod.
export { DEFAULT_FLOW_SOURCES } from './flow-source-defaults.js';

/** Each declared source named like a default one starts from that one's settings (so it needs no `listen`). */
function onNamedDefaults(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(value)) {
    const base = Object.hasOwn(DEFAULT_FLOW_SOURCES, name) ? DEFAULT_FLOW_SOURCES[name] : undefined;
    out[name] = base && typeof source === 'object' && source !== null && !Array.isArray(source) ? { ...base, ...source } : source;
  }
  return out;
}

/**
 * The `flowSources` section: the declared sources (they replace the default
 * set), each merged with the default source of its name if there is one;
 * when absent, DEFAULT_FLOW_SOURCES.
 */
export const flowSourcesSchema = z
  .preprocess(onNamedDefaults, z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), flowSourceSchema))
  .prefault(DEFAULT_FLOW_SOURCES);
