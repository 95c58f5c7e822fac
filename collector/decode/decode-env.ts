/**
 * What the v5, v9 and IPFIX decoders share for one datagram, apart from the
 * entry point (decoder.ts) that builds it, so the version decoders do not
 * import the module that imports them.
 */
import type { CollectorCounters, ExporterCounters } from './collector-counters.js';
import type { PendingBuffer } from './pending-buffer.js';
import type { DomainState, TemplateCache } from './template-cache.js';

/** Who sent a datagram: its address as text (counter key) and as 16 bytes (IPv4-mapped for IPv4). */
export interface ExporterRef {
  readonly address: string;
  readonly bytes16: Uint8Array;
}

/** What the v9 and IPFIX decoders share with the entry point (decoder.ts) for one datagram. */
export interface DecodeEnv {
  readonly templates: TemplateCache;
  readonly pending: PendingBuffer;
  readonly counters: CollectorCounters;
  readonly exporterCounters: ExporterCounters;
  readonly exporter: ExporterRef;
  readonly receivedMs: number;
  /** Configured interval for this exporter (0 = none configured). */
  readonly overrideInterval: number;
  /** Row ranges [start, end, start, end, …] of held data released by this datagram's templates (kept if it is malformed). */
  readonly released: number[];
  /**
   * Reverse rows (two-way records) this datagram's own sets added so far: counted in
   * reverseFlows when the datagram turns out whole, else taken back with it (they are not
   * records, so not counted in recordsInMalformed either).
   */
  reverseRows: number;
  /** Bounds of plausible values from the wire. */
  readonly limits: ValueLimits;
}

/** What a value from the wire may be before it is counted as absurd. */
export interface ValueLimits {
  /** Flow times before this (ms since epoch) are clamped to the export time. */
  readonly minTimeMs: number;
  /** Flow times later than the received time plus this are clamped to the export time. */
  readonly maxFutureMs: number;
  /** Sampling intervals above this are refused (not applied) and counted. */
  readonly maxSamplingInterval: number;
}

/**
 * Checks a header's sequence number against the one expected and sets the
 * next expectation (`units` = what this message adds: v5 flows, v9 1 packet,
 * IPFIX data records; a negative `units` means "unknown", which resyncs).
 */
export function trackSequence(domain: DomainState, sequence: number, units: number, env: DecodeEnv): void {
  if (domain.nextSequence >= 0 && sequence !== domain.nextSequence) {
    const ahead = (sequence - domain.nextSequence) >>> 0;
    // Only a forward jump of less than half the space is a gap; anything
    // else is a restart or reordering, which resyncs without counting.
    if (ahead < 0x80000000) {
      env.counters.add(env.exporterCounters, 'sequenceGaps');
      env.counters.add(env.exporterCounters, 'sequenceMissing', ahead);
    }
  }
  domain.nextSequence = units < 0 ? -1 : (sequence + units) >>> 0;
}
