/**
 * Exact KPI aggregates of a set of flows (one hour, or part of one): totals,
 * TCP RST flows, per protocol, and per source address, destination address
 * and TCP/UDP destination port. Filled column-wise from FlowBatch rows, so
 * the capture writer can keep one per open hour and a file scan can build
 * one for any window; the KPI cache stores them when an hour is sealed.
 */
import type { FlowBatch } from '../../common/flow-batch.js';
import { KeyTable, type Metric, type RankedRows, BYTES, FLOWS, PACKETS } from './key-table.js';
import { cutLevels, type Level } from './levels.js';
import { MinuteCounters } from './minute-counters.js';
import { LEVEL_ENDS, type RankedSource } from './top-merge.js';

/** Flows, bytes and packets of one group. */
export interface Totals {
  flows: number;
  bytes: number;
  packets: number;
}

const TCP = 6;
const UDP = 17;
const RST = 0x04;

/** The columns a KPI aggregate reads from a batch (a file scan decodes only these). */
export const AGGREGATE_COLUMNS = ['received', 'bytes', 'packets', 'proto', 'tcpFlags', 'dstPort', 'srcAddr', 'dstAddr'] as const;

/** The subset of FlowBatch an aggregate reads (the optional parts only with minute counters: MINUTE_COLUMNS). */
export interface AggregateInput {
  length: number;
  cols: Pick<FlowBatch['cols'], 'received' | 'bytes' | 'packets' | 'proto' | 'tcpFlags' | 'dstPort'> &
    Partial<Pick<FlowBatch['cols'], 'tos' | 'inputIf' | 'outputIf'>>;
  srcAddr: Uint8Array;
  dstAddr: Uint8Array;
  exporter?: Uint8Array;
}

function wordsOf(column: Uint8Array): Uint32Array {
  // A Uint32Array view needs 4-byte alignment; a misaligned column is copied once.
  const aligned = column.byteOffset % 4 === 0 ? column : column.slice();
  return new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >>> 2);
}

/** KPI aggregates of a set of flows. */
export class HourAggregate {
  flows = 0;
  bytes = 0;
  packets = 0;
  /** TCP flows with RST set (`denied_flows`; nfdump's `flags R` implies TCP). */
  rstFlows = 0;
  /** Earliest and latest received time of the flows added (ms), or ±Infinity when empty. */
  firstReceived = Infinity;
  lastReceived = -Infinity;
  /** flows, bytes, packets per IP protocol number. */
  readonly proto = new Float64Array(256 * 3);
  readonly src: KeyTable;
  readonly dst: KeyTable;
  /** flows, bytes, packets per destination port, TCP and UDP flows only. */
  readonly ports = new Float64Array(65536 * 3);
  /** Per-minute counters (minute-counters.ts), kept only for a cache entry: live and scanned hours do not need them. */
  readonly minutes: MinuteCounters | undefined;

  constructor(expectedKeys = 0, opts: { minutes?: boolean } = {}) {
    this.src = new KeyTable(expectedKeys);
    this.dst = new KeyTable(expectedKeys);
    this.minutes = opts.minutes ? new MinuteCounters() : undefined;
  }

  /**
   * Adds rows `from` ≤ i < `to` of a batch; with `window`, only rows whose
   * received time is in [window.from, window.to).
   */
  add(batch: AggregateInput, from = 0, to = batch.length, window?: { from: number; to: number }): void {
    const { received, bytes, packets, proto, tcpFlags, dstPort } = batch.cols;
    const src = wordsOf(batch.srcAddr);
    const dst = wordsOf(batch.dstAddr);
    const protoAcc = this.proto;
    const ports = this.ports;
    const lo = window ? window.from : -Infinity;
    const hi = window ? window.to : Infinity;
    if (this.minutes) {
      const { tos, inputIf, outputIf } = batch.cols;
      if (!tos || !inputIf || !outputIf || !batch.exporter) throw new Error('minute counters need the MINUTE_COLUMNS of a batch');
      this.minutes.add(
        { length: batch.length, cols: { ...batch.cols, tos, inputIf, outputIf }, exporter: batch.exporter },
        from,
        to,
        lo,
        hi,
      );
    }
    for (let i = from; i < to; i++) {
      const t = received[i]!;
      if (t < lo || t >= hi) continue;
      const b = bytes[i]!;
      const p = packets[i]!;
      const pr = proto[i]!;
      this.flows++;
      this.bytes += b;
      this.packets += p;
      if (t < this.firstReceived) this.firstReceived = t;
      if (t > this.lastReceived) this.lastReceived = t;
      const k = pr * 3;
      protoAcc[k]! += 1;
      protoAcc[k + 1]! += b;
      protoAcc[k + 2]! += p;
      if (pr === TCP || pr === UDP) {
        const q = dstPort[i]! * 3;
        ports[q]! += 1;
        ports[q + 1]! += b;
        ports[q + 2]! += p;
        if (pr === TCP && tcpFlags[i]! & RST) this.rstFlows++;
      }
      const w = i * 4;
      this.src.addWords(src[w]!, src[w + 1]!, src[w + 2]!, src[w + 3]!, b, p, 1);
      this.dst.addWords(dst[w]!, dst[w + 1]!, dst[w + 2]!, dst[w + 3]!, b, p, 1);
    }
  }

  /** Adds everything of another aggregate. */
  merge(other: HourAggregate): void {
    if (this.minutes || other.minutes) throw new Error('aggregates with minute counters are not merged');
    this.flows += other.flows;
    this.bytes += other.bytes;
    this.packets += other.packets;
    this.rstFlows += other.rstFlows;
    this.firstReceived = Math.min(this.firstReceived, other.firstReceived);
    this.lastReceived = Math.max(this.lastReceived, other.lastReceived);
    for (let i = 0; i < this.proto.length; i++) this.proto[i]! += other.proto[i]!;
    for (let i = 0; i < this.ports.length; i++) if (other.ports[i] !== 0) this.ports[i]! += other.ports[i]!;
    this.src.merge(other.src);
    this.dst.merge(other.dst);
  }

  /** Protocols that have flows: number with flows, bytes, packets. */
  protocols(): Array<Totals & { proto: number }> {
    const out: Array<Totals & { proto: number }> = [];
    for (let p = 0; p < 256; p++) {
      const flows = this.proto[p * 3]!;
      if (flows) out.push({ proto: p, flows, bytes: this.proto[p * 3 + 1]!, packets: this.proto[p * 3 + 2]! });
    }
    return out;
  }

  /** Every TCP/UDP destination port with flows, as 2-byte big-endian keys, in port order. */
  portRows(): RankedRows {
    let n = 0;
    for (let port = 0; port < 65536; port++) if (this.ports[port * 3]) n++;
    const rows: RankedRows = { keyWidth: 2, length: n, keys: new Uint8Array(n * 2), vals: new Float64Array(n * 3) };
    let i = 0;
    for (let port = 0; port < 65536; port++) {
      const flows = this.ports[port * 3]!;
      if (!flows) continue;
      rows.keys[i * 2] = port >> 8;
      rows.keys[i * 2 + 1] = port & 0xff;
      // Port arrays hold flows, bytes, packets; ranked rows hold bytes, packets, flows.
      rows.vals[i * 3 + BYTES] = this.ports[port * 3 + 1]!;
      rows.vals[i * 3 + PACKETS] = this.ports[port * 3 + 2]!;
      rows.vals[i * 3 + FLOWS] = flows;
      i++;
    }
    return rows;
  }
}

/** A RankedSource over a key table: the best 256 by a partial selection, deeper levels from a full ranking made on demand. */
export function keyTableSource(table: KeyTable, metric: Metric): RankedSource {
  let full: Level[] | undefined;
  return {
    level(level) {
      if (level === 0) {
        const { rows, next } = table.top(metric, LEVEL_ENDS[0]);
        return rows.length ? { rows, next } : undefined;
      }
      // Deeper levels cut the same total order, so level 0 here equals level 0 of the cut.
      full ??= cutLevels(table.rows(), metric);
      return full[level];
    },
  };
}

/** A RankedSource over the aggregate's TCP/UDP destination ports. */
export function portSource(agg: HourAggregate, metric: Metric): RankedSource {
  let levels: Level[] | undefined;
  return { level: (k) => (levels ??= cutLevels(agg.portRows(), metric))[k] };
}
