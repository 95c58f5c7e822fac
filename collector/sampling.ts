/**
 * Sampling intervals: where an exporter says it samples 1 packet in N, the
 * stored bytes and packets are multiplied by N and N is kept with the flow.
 *
 * Sources, most specific first: the per-exporter configured override; a
 * data record's own interval field; its sampler id looked up in the
 * options data of the same exporter domain; an interval the options data
 * announced without a sampler id; the v5 header. None of them → 1.
 *
 * An interval from the wire above the configured bound (`maxSamplingInterval`,
 * default 2^24) is refused and counted (`samplingRefused`), never applied: it
 * would turn one packet into petabytes. It is ignored as if the exporter had
 * not said it: options data leave the domain's previous interval in force (1
 * if none), a record's own field falls back to its sampler's or the domain's
 * interval, and a v5 header counts its flows as unsampled. (data-sets.ts,
 * record-decoder.ts and netflow-v5.ts apply the bound.)
 */
import type { DomainState } from './template-cache.js';

/** An interval from the wire as the multiplier to apply (0 and garbage → 1). */
export function normaliseInterval(n: number): number {
  return Number.isFinite(n) && n >= 1 ? Math.min(Math.floor(n), 0xffffffff) : 1;
}

/**
 * Interval from IPFIX packet-interval sampling (RFC 5477): samplingPacketInterval
 * packets selected out of every interval + samplingPacketSpace.
 */
export function packetSpaceInterval(packetInterval: number, packetSpace: number): number {
  if (packetInterval <= 0) return 0;
  return (packetInterval + packetSpace) / packetInterval;
}

/** Interval from samplingSize out of samplingPopulation (RFC 5477 random n-out-of-N). */
export function populationInterval(size: number, population: number): number {
  if (size <= 0) return 0;
  return population / size;
}

/** What one options data record said about sampling (NaN or absent = not said). */
export interface SamplingFacts {
  samplerId: number;
  interval: number;
}

/** Records what options data announced in the domain state. */
export function learnSampling(domain: DomainState, facts: SamplingFacts): void {
  if (!(facts.interval >= 1)) return;
  const interval = normaliseInterval(facts.interval);
  if (Number.isFinite(facts.samplerId)) domain.samplers.set(facts.samplerId, interval);
  else domain.defaultInterval = interval;
}

/** The interval for a data record with sampler id `samplerId` (NaN = none in the record). */
export function intervalForSampler(domain: DomainState, samplerId: number): number {
  if (Number.isFinite(samplerId)) {
    const n = domain.samplers.get(samplerId);
    if (n !== undefined) return n;
  }
  return domain.defaultInterval || 1;
}
