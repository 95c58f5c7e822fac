/**
 * The hourly KPI cache as the query side sees it: per sealed hour of a flow
 * source, totals, per-protocol figures and the levels of three complete
 * rankings (source address and destination address by bytes, TCP/UDP
 * destination port by flows) that top-merge.ts merges exactly.
 */
import type { Level } from './levels.js';
import type { MinuteDim, MinuteRows } from './minute-counters.js';

/** The three rankings kept per hour. */
export type Dimension = 'src' | 'dst' | 'port';

/** Key width in bytes of each dimension (16-byte addresses, 2-byte ports). */
export const KEY_WIDTH: Readonly<Record<Dimension, number>> = { src: 16, dst: 16, port: 2 };

/** Totals of one cached hour. */
export interface CachedHour {
  source: string;
  hourStart: number;
  /** The sealed file the figures come from, and its size when they were made. */
  file: string;
  fileSize: number;
  flows: number;
  bytes: number;
  packets: number;
  /** TCP flows with RST set. */
  rstFlows: number;
}

/** Flows, bytes, packets of one IP protocol in one hour. */
export interface ProtocolRow {
  proto: number;
  flows: number;
  bytes: number;
  packets: number;
}

/** What is stored for one sealed hour. */
export interface HourEntry extends CachedHour {
  protocols: ProtocolRow[];
  levels: Record<Dimension, Level[]>;
  /** Counters per received minute (minute-counters.ts); an entry without them answers no series. */
  minutes?: Record<MinuteDim, MinuteRows>;
}

/** Hourly aggregates of sealed capture files. */
export interface KpiCache {
  /** Cached hours of a source with hourStart in [from, to), oldest first. */
  hours(source: string, from: number, to: number): CachedHour[];
  /** Per-protocol rows of one cached hour. */
  protocols(source: string, hourStart: number): ProtocolRow[];
  /** One level of a ranking of a cached hour; undefined past the last level. */
  level(source: string, hourStart: number, dim: Dimension, level: number): Level | undefined;
  /** How many keys a ranking of a cached hour holds (rows over all its levels). */
  keyCount(source: string, hourStart: number, dim: Dimension): number;
  /** The minute counters of one dimension of a cached hour; undefined when the entry has none. */
  minutes(source: string, hourStart: number, dim: MinuteDim): MinuteRows | undefined;
  /** Stores (or replaces) an hour in one transaction. */
  put(entry: HourEntry): void;
  /** Forgets an hour (its file expired). */
  drop(source: string, hourStart: number): void;
  close(): void;
}
