/**
 * Running aggregates of flows: totals, per protocol, and full per-key tables
 * for source IP, destination IP and destination port.
 *
 * The writer keeps one per open hour, updated as blocks reach the file, so a
 * KPI query on the open hour reads them instead of rescanning; the KPI cache
 * builds one per sealed hour from the file (`aggregateFiles`). The per-key
 * tables are complete (not a top-K), so top lists merged over many hours are
 * exact. Keys live in typed arrays and Maps of numbers (IPv4) or short
 * strings (IPv6), not an object per key.
 */
import { type FlowBatch, formatAddress } from '../../common/flow-batch.js';
import { TCP_RST, emptyTotals, type ColumnName, type FileTotals } from './format.js';
import { scanFlows, type CaptureFileInfo, type ScanOptions } from './reader.js';

/** bytes, packets and flows of one key. */
export interface KeyStats {
  bytes: number;
  packets: number;
  flows: number;
}

/** Per-key table names: `dstPort` counts TCP and UDP flows only (as the KPI top_dst list does). */
export type KeyKind = 'srcIp' | 'dstIp' | 'dstPort';

/** One entry of a top list; `key` is the address text or the port number. */
export interface TopEntry extends KeyStats {
  key: string | number;
}

/** Totals of an aggregate. */
export interface AggregateTotals extends KeyStats {
  rstFlows: number;
  /** Earliest flow start and latest flow end (ms), 0 when empty. */
  first: number;
  last: number;
  /** Received-time range (ms), 0 when empty. */
  receivedMin: number;
  receivedMax: number;
}

/** Read-only view of aggregates (what the KPI side needs). */
export interface FlowAggregatesView {
  totals(): AggregateTotals;
  /** Per protocol number, only protocols seen. */
  protocols(): Array<KeyStats & { proto: number }>;
  /** Top `n` keys of a table by one measure, ties broken by the other measures then key. */
  top(kind: KeyKind, by: keyof KeyStats, n: number): TopEntry[];
  /** Visits every key of a table (full per-key aggregates, for the hourly cache). */
  forEach(kind: KeyKind, fn: (key: string | number, stats: KeyStats) => void): void;
  /** Number of distinct keys in a table. */
  size(kind: KeyKind): number;
}

/**
 * One per-key table: keys (an address as four native 32-bit words, or a
 * port) → bytes, packets, flows. Open addressing on typed arrays, the three
 * measures of a key side by side: a JS Map keyed by strings would allocate
 * per row, and separate arrays cost three cache misses per update.
 */
class KeyTable {
  private readonly width: number; // words per key: 4 (address) or 1 (port)
  private keyWords: Int32Array;
  private stats: Float64Array;
  private index = new Int32Array(1 << 12); // slot + 1; 0 = empty
  private mask = (1 << 12) - 1;
  private shift = 32 - 12; // Fibonacci hashing: the top bits of hash × 2^32/φ
  count = 0;

  constructor(ports: boolean) {
    this.width = ports ? 1 : 4;
    this.keyWords = new Int32Array(1024 * this.width);
    this.stats = new Float64Array(1024 * 3);
  }

  private hash(a: number, b: number, c: number, d: number): number {
    return (
      Math.imul(d ^ Math.imul(c, 0x85ebca6b) ^ Math.imul(b, 0xc2b2ae35) ^ Math.imul(a, 0x27d4eb2f), 0x9e3779b1) >>> this.shift
    );
  }

  private growSlots(): void {
    const k = new Int32Array(this.keyWords.length * 2);
    k.set(this.keyWords);
    this.keyWords = k;
    const st = new Float64Array(this.stats.length * 2);
    st.set(this.stats);
    this.stats = st;
  }

  private growIndex(): void {
    this.index = new Int32Array(this.index.length * 2);
    this.mask = this.index.length - 1;
    this.shift--;
    const kw = this.keyWords;
    const w = this.width;
    for (let s = 0; s < this.count; s++) {
      let h = w === 4 ? this.hash(kw[s * 4]!, kw[s * 4 + 1]!, kw[s * 4 + 2]!, kw[s * 4 + 3]!) : this.hash(0, 0, 0, kw[s]!);
      while (this.index[h] !== 0) h = (h + 1) & this.mask;
      this.index[h] = s + 1;
    }
  }

  /** Adds one flow to key (a, b, c, d); a port key is (0, 0, 0, port). */
  add(a: number, b: number, c: number, d: number, bytes: number, packets: number): void {
    const kw = this.keyWords;
    const w = this.width;
    let h = this.hash(a, b, c, d);
    let slot = -1;
    for (;;) {
      const v = this.index[h]!;
      if (v === 0) break;
      const s = v - 1;
      if (w === 1 ? kw[s] === d : kw[s * 4] === a && kw[s * 4 + 1] === b && kw[s * 4 + 2] === c && kw[s * 4 + 3] === d) {
        slot = s;
        break;
      }
      h = (h + 1) & this.mask;
    }
    if (slot < 0) {
      slot = this.count++;
      if (slot * w >= this.keyWords.length) this.growSlots();
      const k = this.keyWords;
      if (w === 1) k[slot] = d;
      else {
        k[slot * 4] = a;
        k[slot * 4 + 1] = b;
        k[slot * 4 + 2] = c;
        k[slot * 4 + 3] = d;
      }
      this.index[h] = slot + 1;
      if (this.count * 2 > this.mask) this.growIndex();
    }
    const st = this.stats;
    st[slot * 3]! += bytes;
    st[slot * 3 + 1]! += packets;
    st[slot * 3 + 2]! += 1;
  }

  /** The measures of every slot, three per slot (bytes, packets, flows), for tight scans. */
  measures(): Float64Array {
    return this.stats;
  }

  measure(slot: number, m: keyof KeyStats): number {
    return this.stats[slot * 3 + (m === 'bytes' ? 0 : m === 'packets' ? 1 : 2)]!;
  }

  statsOf(slot: number): KeyStats {
    return { bytes: this.stats[slot * 3]!, packets: this.stats[slot * 3 + 1]!, flows: this.stats[slot * 3 + 2]! };
  }

  /** The key of a slot: address text, or port number. */
  key(slot: number): string | number {
    if (this.width === 1) return this.keyWords[slot]!;
    const bytes = new Uint8Array(this.keyWords.buffer, slot * 16, 16);
    return formatAddress(bytes, 0);
  }
}

const MEASURES = ['bytes', 'flows', 'packets'] as const;

/** Mutable aggregates over flows added with `add`. */
export class FlowAggregates implements FlowAggregatesView {
  private readonly t: AggregateTotals = {
    bytes: 0,
    packets: 0,
    flows: 0,
    rstFlows: 0,
    first: 0,
    last: 0,
    receivedMin: 0,
    receivedMax: 0,
  };
  private readonly protoBytes = new Float64Array(256);
  private readonly protoPackets = new Float64Array(256);
  private readonly protoFlows = new Float64Array(256);
  private readonly tables: Record<KeyKind, KeyTable> = {
    srcIp: new KeyTable(false),
    dstIp: new KeyTable(false),
    dstPort: new KeyTable(true),
  };

  /** Columns `add` reads, for scans that decode only what they need. */
  static readonly COLUMNS: readonly ColumnName[] = [
    'received',
    'start',
    'end',
    'bytes',
    'packets',
    'proto',
    'tcpFlags',
    'dstPort',
    'srcAddr',
    'dstAddr',
  ];

  /** Adds rows [from, from+n) of a batch. */
  add(batch: FlowBatch, from = 0, n = batch.length - from): void {
    const c = batch.cols;
    const t = this.t;
    const src = this.tables.srcIp;
    const dst = this.tables.dstIp;
    const ports = this.tables.dstPort;
    const srcWords = batch.srcWords;
    const dstWords = batch.dstWords;
    for (let i = from; i < from + n; i++) {
      const bytes = c.bytes[i]!;
      const packets = c.packets[i]!;
      const proto = c.proto[i]!;
      const start = c.start[i]!;
      const end = c.end[i]!;
      const rec = c.received[i]!;
      if (t.flows === 0) {
        t.first = start;
        t.last = end;
        t.receivedMin = rec;
        t.receivedMax = rec;
      } else {
        if (start < t.first) t.first = start;
        if (end > t.last) t.last = end;
        if (rec < t.receivedMin) t.receivedMin = rec;
        if (rec > t.receivedMax) t.receivedMax = rec;
      }
      t.flows++;
      t.bytes += bytes;
      t.packets += packets;
      // nfdump's `flags R` (denied_flows) matches TCP flows only.
      if (proto === 6 && c.tcpFlags[i]! & TCP_RST) t.rstFlows++;
      this.protoBytes[proto]! += bytes;
      this.protoPackets[proto]! += packets;
      this.protoFlows[proto]! += 1;
      const w = i * 4;
      src.add(srcWords[w]!, srcWords[w + 1]!, srcWords[w + 2]!, srcWords[w + 3]!, bytes, packets);
      dst.add(dstWords[w]!, dstWords[w + 1]!, dstWords[w + 2]!, dstWords[w + 3]!, bytes, packets);
      if (proto === 6 || proto === 17) ports.add(0, 0, 0, c.dstPort[i]!, bytes, packets);
    }
  }

  totals(): AggregateTotals {
    return { ...this.t };
  }

  protocols(): Array<KeyStats & { proto: number }> {
    const out: Array<KeyStats & { proto: number }> = [];
    for (let p = 0; p < 256; p++) {
      if (this.protoFlows[p]! > 0)
        out.push({ proto: p, bytes: this.protoBytes[p]!, packets: this.protoPackets[p]!, flows: this.protoFlows[p]! });
    }
    return out;
  }

  top(kind: KeyKind, by: keyof KeyStats, n: number): TopEntry[] {
    const tb = this.tables[kind];
    const order = [by, ...MEASURES.filter((m) => m !== by)];
    const better = (a: number, b: number): boolean => {
      for (const m of order) {
        const x = tb.measure(a, m);
        const y = tb.measure(b, m);
        if (x !== y) return x > y;
      }
      return a < b;
    };
    // Selection with a small sorted array: O(keys × n) with n = 10 beats sorting a million keys.
    const best: number[] = [];
    // Once the list is full, a key below the last one's value is rejected by one read, not the full comparison.
    let floor = -Infinity;
    const st = tb.measures();
    const off = by === 'bytes' ? 0 : by === 'packets' ? 1 : 2;
    for (let s = 0; s < tb.count; s++) {
      if (best.length === n) {
        if (st[s * 3 + off]! < floor || !better(s, best[n - 1]!)) continue;
      }
      let j = best.length < n ? best.length : n - 1;
      if (best.length < n) best.push(s);
      while (j > 0 && better(s, best[j - 1]!)) {
        best[j] = best[j - 1]!;
        j--;
      }
      best[j] = s;
      if (best.length === n) floor = tb.measure(best[n - 1]!, by);
    }
    return best.map((s) => ({ key: tb.key(s), ...tb.statsOf(s) }));
  }

  forEach(kind: KeyKind, fn: (key: string | number, stats: KeyStats) => void): void {
    const tb = this.tables[kind];
    for (let s = 0; s < tb.count; s++) fn(tb.key(s), tb.statsOf(s));
  }

  size(kind: KeyKind): number {
    return this.tables[kind].count;
  }
}

/** Adds rows [from, from+n) to nfdump-style totals (TCP/UDP/ICMP/other; ICMP includes ICMPv6, as nfdump counts it). */
export function accumulateTotals(t: FileTotals, batch: FlowBatch, from = 0, n = batch.length - from): void {
  const c = batch.cols;
  for (let i = from; i < from + n; i++) {
    const bytes = c.bytes[i]!;
    const packets = c.packets[i]!;
    const p = c.proto[i]!;
    const cls = p === 6 ? t.tcp : p === 17 ? t.udp : p === 1 || p === 58 ? t.icmp : t.other;
    const first = t.all.flows === 0;
    t.all.flows++;
    t.all.bytes += bytes;
    t.all.packets += packets;
    cls.flows++;
    cls.bytes += bytes;
    cls.packets += packets;
    const s = c.start[i]!;
    const e = c.end[i]!;
    const r = c.received[i]!;
    if (first || s < t.first) t.first = s;
    if (first || e > t.last) t.last = e;
    if (first || r < t.receivedMin) t.receivedMin = r;
    if (first || r > t.receivedMax) t.receivedMax = r;
    if (p === 6 && c.tcpFlags[i]! & TCP_RST) t.rstFlows++; // TCP only, as nfdump's `flags R`
  }
}

/** Aggregates the flows of files in a received-time window (a sealed hour for the cache, or part of one). */
export function aggregateFiles(files: readonly (string | CaptureFileInfo)[], opts: ScanOptions = {}): FlowAggregates {
  const agg = new FlowAggregates();
  for (const batch of scanFlows(files, { ...opts, columns: FlowAggregates.COLUMNS })) agg.add(batch);
  return agg;
}

/** nfdump-style totals of files in a window (what `dump --stats` prints). */
export function totalsOfFiles(files: readonly (string | CaptureFileInfo)[], opts: ScanOptions = {}): FileTotals {
  const t = emptyTotals();
  for (const batch of scanFlows(files, {
    ...opts,
    columns: ['received', 'start', 'end', 'bytes', 'packets', 'proto', 'tcpFlags'],
  })) {
    accumulateTotals(t, batch);
  }
  return t;
}
