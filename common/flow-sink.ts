/**
 * Where decoded flows go. The listener and `netsvc import` hand each batch of
 * flow columns to a FlowSink; the capture writer is one, and SummarySink
 * (totals per protocol, for `import --json` and tests) is another.
 */
import type { FlowBatch } from './flow-batch.js';

/** Takes batches of flows for a flow source. */
export interface FlowSink {
  /**
   * Takes the `batch.length` rows of `batch` for `source`. The caller clears
   * and reuses the batch once this returns (or its promise settles): copy
   * whatever must be kept. While a returned promise is pending the caller
   * sends nothing more, so a slow sink slows the caller down instead of
   * piling up memory.
   */
  write(source: string, batch: FlowBatch): void | Promise<void>;
  /**
   * Like `write`, but the batch is the sink's from now on (the caller never
   * touches it again), so a sink may keep its arrays instead of copying
   * them. Once done with them it calls `batch.release` if set, and then
   * leaves the batch alone (its arrays go back to be filled again).
   * Optional: callers that own a batch fall back to `write`.
   */
  take?(source: string, batch: FlowBatch): void | Promise<void>;
}

/** Flows, bytes and packets of one group. */
export interface FlowTotals {
  flows: number;
  bytes: number;
  packets: number;
}

/** What SummarySink saw, for one source or all. */
export interface FlowSummary extends FlowTotals {
  /** By IP protocol number (as text, JSON keys). */
  protocols: Record<string, FlowTotals>;
  /** The four groups `nfdump -I` prints: ICMP includes ICMPv6, other is everything but TCP/UDP/ICMP. */
  nfdumpGroups: { tcp: FlowTotals; udp: FlowTotals; icmp: FlowTotals; other: FlowTotals };
  /** Earliest and latest received time (ms), or null without flows. */
  firstReceived: number | null;
  lastReceived: number | null;
}

function zero(): FlowTotals {
  return { flows: 0, bytes: 0, packets: 0 };
}

/** A sink that only adds things up (per source and overall). */
export class SummarySink implements FlowSink {
  private readonly bySource = new Map<string, { proto: Float64Array; first: number; last: number }>();

  write(source: string, batch: FlowBatch): void {
    let s = this.bySource.get(source);
    if (!s) {
      // flows, bytes, packets per protocol number: 256 × 3 doubles.
      s = { proto: new Float64Array(256 * 3), first: Infinity, last: -Infinity };
      this.bySource.set(source, s);
    }
    const { proto, bytes, packets, received } = batch.cols;
    const acc = s.proto;
    for (let i = 0; i < batch.length; i++) {
      const k = proto[i]! * 3;
      acc[k]! += 1;
      acc[k + 1]! += bytes[i]!;
      acc[k + 2]! += packets[i]!;
      const t = received[i]!;
      if (t < s.first) s.first = t;
      if (t > s.last) s.last = t;
    }
  }

  /** Sources that received at least one batch. */
  sources(): string[] {
    return [...this.bySource.keys()];
  }

  /** Totals for one source, or for all sources when `source` is omitted. */
  summary(source?: string): FlowSummary {
    const out: FlowSummary = {
      ...zero(),
      protocols: {},
      nfdumpGroups: { tcp: zero(), udp: zero(), icmp: zero(), other: zero() },
      firstReceived: null,
      lastReceived: null,
    };
    for (const [name, s] of this.bySource) {
      if (source !== undefined && name !== source) continue;
      for (let p = 0; p < 256; p++) {
        const flows = s.proto[p * 3]!;
        if (flows === 0) continue;
        const t = { flows, bytes: s.proto[p * 3 + 1]!, packets: s.proto[p * 3 + 2]! };
        const key = String(p);
        const acc = (out.protocols[key] ??= zero());
        add(acc, t);
        add(out, t);
        const group = p === 6 ? 'tcp' : p === 17 ? 'udp' : p === 1 || p === 58 ? 'icmp' : 'other';
        add(out.nfdumpGroups[group], t);
      }
      if (Number.isFinite(s.first)) {
        out.firstReceived = out.firstReceived === null ? s.first : Math.min(out.firstReceived, s.first);
        out.lastReceived = out.lastReceived === null ? s.last : Math.max(out.lastReceived, s.last);
      }
    }
    return out;
  }
}

function add(into: FlowTotals, t: FlowTotals): void {
  into.flows += t.flows;
  into.bytes += t.bytes;
  into.packets += t.packets;
}
