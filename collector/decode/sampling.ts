/**
 * Sampling intervals: where an exporter says it samples 1 packet in N, the
 * stored bytes and packets are multiplied by N and N is kept with the flow.
 *
 * Sources, most specific first: the per-exporter configured override; a
 * data record's own interval field; its sampler id looked up in the
 * options data of the same exporter domain; an interval the options data
 * announced without a sampler id, or, for a record that names no sampler,
 * the domain's only sampler; the v5 header. None of them → 1. A record's own interval is samplingInterval (34)
 * or samplerRandomInterval (50), else what its PSAMP selector fields imply
 * (`selectorInterval`); options data are read the same way.
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
 * The interval a PSAMP selector's parameters imply (RFC 5475 §6, RFC 5477 §8.2), as the
 * whole number of packets one selected packet stands for; 0 when none of them is given
 * (NaN = not in the record). First that applies:
 * - systematic count-based: samplingPacketInterval (305) packets selected out of every
 *   305 + samplingPacketSpace (306) → (305 + 306) / 305;
 * - random n-out-of-N: samplingSize (309) out of samplingPopulation (310) → 310 / 309;
 * - uniform probabilistic: samplingProbability (311) → 1 / p;
 * - systematic time-based: samplingTimeInterval (307) µs selected out of every 307 +
 *   samplingTimeSpace (308) µs → (307 + 308) / 307, the share of time selected, which is
 *   the share of packets when they arrive evenly (the only estimate a collector has).
 * Fractions are rounded to the nearest whole interval (1 out of 1.5 packets counts as 2).
 */
export function selectorInterval(
  packetInterval: number,
  packetSpace: number,
  size: number,
  population: number,
  probability: number,
  timeInterval: number,
  timeSpace: number,
): number {
  let n = Number.NaN;
  if (packetInterval >= 1) n = (packetInterval + (packetSpace >= 0 ? packetSpace : 0)) / packetInterval;
  else if (size >= 1 && population >= size) n = population / size;
  else if (probability > 0 && probability <= 1) n = 1 / probability;
  else if (timeInterval >= 1) n = (timeInterval + (timeSpace >= 0 ? timeSpace : 0)) / timeInterval;
  return n >= 1 ? Math.round(n) : 0;
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

/**
 * The interval for a data record that names no sampler: the one options data announced
 * without a sampler id; else, when the domain announced exactly one sampler, that one's (an
 * exporter with one selector often keys its options by the selector id and leaves the id
 * out of its data records); else 1.
 */
export function domainInterval(domain: DomainState): number {
  if (domain.defaultInterval >= 1) return domain.defaultInterval;
  if (domain.samplers.size === 1) for (const n of domain.samplers.values()) return n;
  return 1;
}
