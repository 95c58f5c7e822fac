/**
 * What the netflow API asks of storage, in storage terms (ms since epoch,
 * numbers, address text); the routes format the answers. Windows are on
 * received time, `[from, to)`.
 */
import type { ProtocolRow } from './kpi-cache.js';

/** One entry of a top list of addresses. */
export interface AddressTop {
  ip: string;
  bytes: number;
  packets: number;
  flows: number;
}

/** One entry of the top list of TCP/UDP destination ports. */
export interface PortTop {
  port: number;
  bytes: number;
  packets: number;
  flows: number;
}

/** KPI figures of a window. */
export interface KpiFigures {
  /** `hourly_cache` when every hour came from the cache, `fallback` when any was computed live. */
  origin: 'hourly_cache' | 'fallback';
  flows: number;
  bytes: number;
  packets: number;
  /** TCP flows with RST set. */
  rstFlows: number;
  /** Protocols with flows, by bytes descending. */
  protocols: ProtocolRow[];
  topSrc: AddressTop[];
  topDst: AddressTop[];
  topPorts: PortTop[];
  /** One point per hour from the hour of `from` to the hour before `to`, empty hours included. */
  hours: Array<{ hourStart: number; bytes: number; flows: number }>;
}

/** A flow as stored (times in ms since epoch; counts exact: a bigint above 2^53 − 1). */
export interface FlowRow {
  received: number;
  start: number;
  end: number;
  srcIp: string;
  dstIp: string;
  srcPort: number;
  dstPort: number;
  proto: number;
  tcpFlags: number;
  packets: number | bigint;
  bytes: number | bigint;
}

/** The newest capture file of a source and the span of all of them. */
export interface LatestFile {
  /** Hour of the newest (or open) file; the current hour when the source has no file yet. */
  hourStart: number;
  hourEnd: number;
  /** `nfcapd.YYYYMMDDHHmm` of that hour. */
  fileName: string;
  intervalSec: number;
  /** Whether that hour is in the hourly cache. */
  cached: boolean;
  /** Start of the oldest hour and end of the newest hour with a file. */
  dataStart: number;
  dataEnd: number;
}

/** Problems met while answering, added up since start. */
export interface QueryCounters {
  /** Capture files that could not be opened (damaged, truncated) and were skipped. */
  corruptFiles: number;
  /** Damaged blocks skipped inside otherwise readable files. */
  corruptBlocks: number;
  blocksRead: number;
  blocksSkipped: number;
}

/** Read-only netflow queries over a flow source's capture files and KPI cache. */
export interface NetflowQuery {
  /** Flow sources that exist (configured). */
  sources(): readonly string[];
  latest(source: string): LatestFile;
  /** KPI figures of [from, to); with `useCache: false` every hour is computed from files (for checks). */
  kpi(source: string, from: number, to: number, opts?: { useCache?: boolean }): Promise<KpiFigures>;
  /** The newest `limit` flows received in [from, to), by flow start then received time, newest first. */
  flows(source: string, from: number, to: number, limit: number): Promise<FlowRow[]>;
  readonly counters: QueryCounters;
}
