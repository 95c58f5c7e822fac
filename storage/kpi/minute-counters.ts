/**
 * Flows, packets and bytes per received minute, for the total and per value
 * of a few low-cardinality dimensions, so that a series or a top-N over
 * cached hours (storage/flow-query/cached-answers.ts) never scans raw flows.
 *
 * Keys are written as the flow query engine writes them
 * (storage/flow-query/dimensions.ts): one word for a number, four big-endian
 * words for an address, so both give the same groups in the same tie order.
 * A minute is the received time in ms divided by 60 000, floored (minutes
 * since the epoch): a row outside its file's hour is still counted where it
 * belongs.
 */
import type { FlowBatch } from '../../common/flow-batch.js';
import { keyWord } from '../flow-query/dimensions.js';
import { BYTES, compareKeyWords, FLOWS, HashGroups, PACKETS } from '../flow-query/group-table.js';

/**
 * The dimensions counted per minute. `dst_port_other` is the destination
 * port of flows that are neither TCP nor UDP (ICMP type and code): with the
 * complete TCP/UDP port ranking of the hour it gives every flow's dst_port.
 */
export const MINUTE_DIMS = ['total', 'proto', 'tos', 'exporter', 'input_if', 'output_if', 'dst_port_other'] as const;

/** One dimension counted per minute. */
export type MinuteDim = (typeof MINUTE_DIMS)[number];

/** Key words of each dimension (an address takes four). */
export const MINUTE_KEY_WORDS: Readonly<Record<MinuteDim, number>> = {
  total: 0,
  proto: 1,
  tos: 1,
  exporter: 4,
  input_if: 1,
  output_if: 1,
  dst_port_other: 1,
};

/** The counters of one dimension: row r is minute `minutes[r]`, key `keys[r * width …]`, values `vals[r * 3 …]` (bytes, packets, flows). */
export interface MinuteRows {
  width: number;
  length: number;
  minutes: Int32Array;
  keys: Uint32Array;
  vals: Float64Array;
}

/** The columns minute counters read from a batch, besides those of the hour aggregate. */
export const MINUTE_COLUMNS = [
  'received',
  'bytes',
  'packets',
  'proto',
  'dstPort',
  'tos',
  'inputIf',
  'outputIf',
  'exporter',
] as const;

/** The subset of FlowBatch the counters read. */
export interface MinuteInput {
  length: number;
  cols: Pick<FlowBatch['cols'], 'received' | 'bytes' | 'packets' | 'proto' | 'dstPort' | 'tos' | 'inputIf' | 'outputIf'>;
  exporter: Uint8Array;
}

const MINUTE_MS = 60_000;
const TCP = 6;
const UDP = 17;

/** Counters per (minute, key words): group-table.ts's hash groups over keys of the minute then the key. */
class MinuteTable {
  private readonly groups: HashGroups;

  constructor(readonly width: number) {
    this.groups = new HashGroups(width + 1);
  }

  /** Adds one flow; the key is `k` (minute first, then `width` words). */
  add(k: Uint32Array, b: number, p: number): void {
    this.groups.addOne(k, 0, b, p);
  }

  get size(): number {
    return this.groups.size;
  }

  /** The rows in (minute, key) order, so that the stored blob is the same for the same flows. */
  rows(): MinuteRows {
    const st = this.width + 1;
    const w = this.width;
    const slots: number[] = [];
    this.groups.forEach((s) => slots.push(s));
    const keys = new Uint32Array(slots.length * st);
    slots.forEach((s, i) => this.groups.key(s, keys, i * st));
    const order = slots.map((_, i) => i).sort((x, y) => compareKeyWords(keys, x * st, keys, y * st, st));
    const out: MinuteRows = {
      width: w,
      length: order.length,
      minutes: new Int32Array(order.length),
      keys: new Uint32Array(order.length * w),
      vals: new Float64Array(order.length * 3),
    };
    order.forEach((i, r) => {
      const s = slots[i]!;
      out.minutes[r] = keys[i * st]!;
      out.keys.set(keys.subarray(i * st + 1, i * st + st), r * w);
      out.vals[r * 3 + BYTES] = this.groups.value(s, BYTES);
      out.vals[r * 3 + PACKETS] = this.groups.value(s, PACKETS);
      out.vals[r * 3 + FLOWS] = this.groups.value(s, FLOWS);
    });
    return out;
  }
}

/** Minute counters of every MINUTE_DIMS dimension for a set of flows. */
export class MinuteCounters {
  private readonly tables = new Map<MinuteDim, MinuteTable>(MINUTE_DIMS.map((d) => [d, new MinuteTable(MINUTE_KEY_WORDS[d])]));
  private readonly k = new Uint32Array(5);

  /** Adds rows `from` ≤ i < `to` whose received time is in [lo, hi). */
  add(batch: MinuteInput, from: number, to: number, lo: number, hi: number): void {
    const { received, bytes, packets, dstPort, tos, inputIf, outputIf } = batch.cols;
    const protoCol = batch.cols.proto;
    // A Uint32Array view needs 4-byte alignment; a misaligned column is copied once.
    const ex = batch.exporter.byteOffset % 4 === 0 ? batch.exporter : batch.exporter.slice();
    const words = new Uint32Array(ex.buffer, ex.byteOffset, ex.byteLength >>> 2);
    const t = this.tables;
    const total = t.get('total')!;
    const pr = t.get('proto')!;
    const ts = t.get('tos')!;
    const exp = t.get('exporter')!;
    const inIf = t.get('input_if')!;
    const outIf = t.get('output_if')!;
    const other = t.get('dst_port_other')!;
    const k = this.k;
    for (let i = from; i < to; i++) {
      const r = received[i]!;
      if (r < lo || r >= hi) continue;
      const b = bytes[i]!;
      const p = packets[i]!;
      k[0] = Math.floor(r / MINUTE_MS);
      total.add(k, b, p);
      const proto = protoCol[i]!;
      k[1] = proto;
      pr.add(k, b, p);
      k[1] = tos[i]!;
      ts.add(k, b, p);
      k[1] = inputIf[i]!;
      inIf.add(k, b, p);
      k[1] = outputIf[i]!;
      outIf.add(k, b, p);
      if (proto !== TCP && proto !== UDP) {
        k[1] = dstPort[i]!;
        other.add(k, b, p);
      }
      const w = i * 4;
      for (let j = 0; j < 4; j++) k[1 + j] = keyWord(words[w + j]!);
      exp.add(k, b, p);
    }
  }

  /** The rows of each dimension. */
  rows(): Record<MinuteDim, MinuteRows> {
    const out = {} as Record<MinuteDim, MinuteRows>;
    for (const [d, table] of this.tables) out[d] = table.rows();
    return out;
  }
}
