/**
 * The defaults of a flow source's settings, written once: the schema
 * (flow-source-config.ts) applies them to the configuration, and the
 * listeners (withFlowSourceDefaults) to settings given to them directly.
 * Apart from the schema so that the listener threads do not load zod.
 */
import type { FlowSourceConfig, FlowSourceSettings } from './flow-source-config.js';

/** The flow sources when none are configured; every other setting of each takes its default. */
export const DEFAULT_FLOW_SOURCES: Readonly<Record<string, FlowSourceSettings>> = Object.freeze({
  netflow: { listen: '0.0.0.0:2055' },
  lentor: { listen: '0.0.0.0:2056' },
});

/** Every setting of a flow source but `listen`, as it is when not given (the schema's `.default()`s check the types). */
export const FLOW_SOURCE_DEFAULTS = Object.freeze({
  exporters: [] as string[],
  receiveBuffer: 8 * 1024 * 1024,
  sampling: {} as Record<string, number>,
  templateTtlSec: 3600,
  pendingMaxAgeSec: 60,
  pendingMaxSets: 1024,
  pendingMaxBytes: 8 * 1024 * 1024,
  pendingMaxSetsPerExporter: 256,
  // Unset bounds take the template store's own (DEFAULT_TEMPLATE_LIMITS).
  templateLimits: {},
  minFlowTime: '1990-01-01',
  maxFutureSec: 86_400,
  maxSamplingInterval: 2 ** 24,
});

/** `settings` with the defaults for what it leaves unset (or undefined); not validated (the configuration's schema does that). */
export function withFlowSourceDefaults(settings: FlowSourceSettings): FlowSourceConfig {
  const given = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
  return { ...FLOW_SOURCE_DEFAULTS, ...given, listen: settings.listen } as FlowSourceConfig;
}

/** Each source of `sources` with its defaults. */
export function flowSourcesWithDefaults(sources: Readonly<Record<string, FlowSourceSettings>>): Record<string, FlowSourceConfig> {
  return Object.fromEntries(Object.entries(sources).map(([name, s]) => [name, withFlowSourceDefaults(s)]));
}
