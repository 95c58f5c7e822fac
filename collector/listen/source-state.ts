/** What the listeners keep per flow source: its ingest, template saving and counters. */
import type { SourceIngest } from '../decode/ingest.js';
import type { FlowSourceConfig } from './flow-source-config.js';

/** One flow source of the listeners. */
export interface SourceState {
  name: string;
  config: FlowSourceConfig;
  ingest: SourceIngest;
  /** Saves the source's templates (no-op without a template dir). */
  save: (all?: boolean) => void;
  /** True when templates changed since the last save (always false without a template dir). */
  changed: () => boolean;
  received: number;
  queueDrops: number;
  sinkErrors: number;
  sinkLostFlows: number;
  /** Failed template expiry runs and saves, each counted and survived. */
  ingestErrors: number;
  /** When (performance.now(), like the flush timer) the batch being filled got its first row; 0 when empty. */
  firstRowAt: number;
}

/** A source's state with its counters at zero; without a template dir, `save` does nothing and `changed` is always false. */
export function newSourceState(
  name: string,
  config: FlowSourceConfig,
  ingest: SourceIngest,
  save = (_all?: boolean): void => {},
  changed = (): boolean => false,
): SourceState {
  return {
    name,
    config,
    save,
    changed,
    ingest,
    received: 0,
    queueDrops: 0,
    sinkErrors: 0,
    sinkLostFlows: 0,
    ingestErrors: 0,
    firstRowAt: 0,
  };
}
