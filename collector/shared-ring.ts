/**
 * A single-producer, single-consumer ring of datagrams in shared memory:
 * the bounded queue between the thread that reads the flow sockets and the
 * thread that decodes.
 *
 * Layout of the SharedArrayBuffer (all offsets 8-byte aligned):
 *
 *   +---------------------------+ 0
 *   | control  Int32 × 16       |  [W] write position, [R] read position,
 *   |                           |  [SLEEP] 1 while the consumer waits
 *   +---------------------------+ 64
 *   | stats    Float64 × n      |  per source: received, queueDrops;
 *   |                           |  per socket: unclaimed, produced, consumed,
 *   |                           |  highWater (datagrams)
 *   +---------------------------+
 *   | exporters  16 B × maxExp  |  id → address, IPv4-mapped IPv6
 *   +---------------------------+
 *   | data  `capacity` bytes    |  records, never split at the end:
 *   |   u32 length | u16 source | u16 socket | u32 exporter id | u32 id generation |
 *   |   f64 received ms | payload … padded to 8                         |
 *   |   length 0xFFFFFFFF marks "wrap to the start"                     |
 *   +---------------------------+
 *
 * Positions count bytes modulo 2^30 (capacity is a power of two ≤ 2^29), so
 * used = (W - R) mod 2^30. The producer writes a record, then publishes it
 * by storing W (Atomics: everything written before is visible to the
 * consumer after it loads W); the consumer frees space by storing R.
 */

/** Atomics.waitAsync (Node ≥ 16), missing from the ES2023 typings this project compiles against. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(a: Int32Array, index: number, value: number, timeoutMs?: number): { async: boolean; value: Promise<string> | string };
  }
).waitAsync;

const W = 0;
const R = 1;
const SLEEP = 2;
const CONTROL_BYTES = 64;
const HEADER = 24;
const WRAP = 0xffffffff;
const POS_MASK = (1 << 30) - 1;

/** Sizes of a ring. */
export interface RingLayout {
  /** Data bytes, a power of two between 64 KiB and 512 MiB. */
  capacity: number;
  sources: number;
  sockets: number;
  maxExporters: number;
}

/** Byte offsets derived from a layout. */
function offsets(l: RingLayout): { stats: number; statsCount: number; exporters: number; data: number; total: number } {
  const statsCount = l.sources * 2 + l.sockets * 4;
  const stats = CONTROL_BYTES;
  const exporters = stats + ((statsCount * 8 + 7) & ~7);
  const data = exporters + ((l.maxExporters * 16 + 7) & ~7);
  return { stats, statsCount, exporters, data, total: data + l.capacity };
}

/** Allocates the shared memory of a ring. */
export function createRingBuffer(layout: RingLayout): SharedArrayBuffer {
  const c = layout.capacity;
  if (!Number.isInteger(c) || c < 65536 || c > 1 << 29 || (c & (c - 1)) !== 0) {
    throw new RangeError('ring capacity must be a power of two between 64 KiB and 512 MiB');
  }
  return new SharedArrayBuffer(offsets(layout).total);
}

/** Rounds a byte count up to the ring's power-of-two capacity (at least 64 KiB, at most 512 MiB). */
export function ringCapacityFor(bytes: number): number {
  let c = 65536;
  while (c < bytes && c < 1 << 29) c *= 2;
  return c;
}

class RingBase {
  protected readonly ctrl: Int32Array;
  protected readonly data: Uint8Array;
  protected readonly view: DataView;
  protected readonly mask: number;
  /** Counters shared by both sides (see the layout). */
  readonly stats: Float64Array;
  protected readonly exporterBytes: Uint8Array;

  constructor(
    readonly sab: SharedArrayBuffer,
    readonly layout: RingLayout,
  ) {
    const o = offsets(layout);
    this.ctrl = new Int32Array(sab, 0, CONTROL_BYTES / 4);
    this.stats = new Float64Array(sab, o.stats, o.statsCount);
    this.exporterBytes = new Uint8Array(sab, o.exporters, layout.maxExporters * 16);
    this.data = new Uint8Array(sab, o.data, layout.capacity);
    this.view = new DataView(sab, o.data, layout.capacity);
    this.mask = layout.capacity - 1;
  }

  /** Index in `stats` of a source's counter. */
  sourceStat(source: number, which: 'received' | 'queueDrops'): number {
    return source * 2 + (which === 'received' ? 0 : 1);
  }

  /** Index in `stats` of a socket's counter. */
  socketStat(socket: number, which: 'unclaimed' | 'produced' | 'consumed' | 'highWater'): number {
    const k = { unclaimed: 0, produced: 1, consumed: 2, highWater: 3 }[which];
    return this.layout.sources * 2 + socket * 4 + k;
  }

  /** Wakes a consumer waiting in `waitForData` (from either thread). */
  wake(): void {
    Atomics.notify(this.ctrl, W);
  }

  /** Bytes waiting to be consumed. */
  usedBytes(): number {
    return (Atomics.load(this.ctrl, W) - Atomics.load(this.ctrl, R)) & POS_MASK;
  }
}

/** Exporters not seen for this long give their id back when the table is full (default of RingProducer). */
export const EXPORTER_IDLE_MS = 600_000;

/** The socket thread's side. */
export class RingProducer extends RingBase {
  private readonly ids = new Map<string, number>();
  private nextId = 0;
  private readonly free: number[] = [];
  private readonly lastSeen: Float64Array;
  /** Byte count (since start) at the end of each id's last record: consumed past it, no record names the id. */
  private readonly lastEnd: Float64Array;
  private readonly gen: Uint32Array;
  private pushedBytes = 0;
  private lastSweep = -Infinity;

  constructor(
    sab: SharedArrayBuffer,
    layout: RingLayout,
    private readonly now: () => number = Date.now,
    private readonly idleMs: number = EXPORTER_IDLE_MS,
  ) {
    super(sab, layout);
    this.lastSeen = new Float64Array(layout.maxExporters);
    this.lastEnd = new Float64Array(layout.maxExporters);
    this.gen = new Uint32Array(layout.maxExporters);
  }

  /**
   * Registers an exporter address (as 16 bytes, IPv4-mapped for IPv4) and
   * returns its id, or -1 when the table is full. When it is full, ids of
   * exporters idle for `idleMs` whose records are all consumed are freed and
   * reused with a new generation, so a burst of hostile source addresses
   * does not lock out later real exporters until restart.
   */
  exporterId(address: string, bytes16: () => Uint8Array): number {
    const t = this.now();
    let id = this.ids.get(address);
    if (id !== undefined) {
      this.lastSeen[id] = t;
      return id;
    }
    if (this.nextId < this.layout.maxExporters) id = this.nextId++;
    else {
      if (this.free.length === 0) this.sweep(t);
      id = this.free.pop();
      if (id === undefined) return -1;
    }
    // Written before any record that names it is published (by the W store).
    this.exporterBytes.set(bytes16(), id * 16);
    this.ids.set(address, id);
    this.lastSeen[id] = t;
    return id;
  }

  /** Frees idle ids no queued record names; at most once a second (or once per `idleMs` if shorter), as it walks the table. */
  private sweep(t: number): void {
    if (t - this.lastSweep < Math.min(1000, this.idleMs)) return;
    this.lastSweep = t;
    const consumed = this.pushedBytes - this.usedBytes();
    for (const [address, id] of this.ids) {
      if (t - this.lastSeen[id]! >= this.idleMs && this.lastEnd[id]! <= consumed) {
        this.ids.delete(address);
        this.gen[id] = (this.gen[id]! + 1) >>> 0;
        this.free.push(id);
      }
    }
  }

  /** Appends one datagram; false (nothing written) when the ring has no room. */
  push(payload: Uint8Array, source: number, socket: number, exporterId: number, receivedMs: number): boolean {
    const need = (HEADER + payload.length + 7) & ~7;
    const cap = this.layout.capacity;
    let w = Atomics.load(this.ctrl, W);
    const r = Atomics.load(this.ctrl, R);
    const used = (w - r) & POS_MASK;
    let off = w & this.mask;
    const tail = cap - off;
    let advance = need;
    if (need > tail) {
      if (used + tail + need > cap) return false;
      this.view.setUint32(off, WRAP, true);
      w = (w + tail) & POS_MASK;
      off = 0;
      advance += tail;
    } else if (used + need > cap) {
      return false;
    }
    const v = this.view;
    v.setUint32(off, payload.length, true);
    v.setUint16(off + 4, source, true);
    v.setUint16(off + 6, socket, true);
    v.setUint32(off + 8, exporterId, true);
    const known = exporterId >= 0 && exporterId < this.layout.maxExporters;
    v.setUint32(off + 12, known ? this.gen[exporterId]! : 0, true);
    v.setFloat64(off + 16, receivedMs, true);
    this.data.set(payload, off + HEADER);
    Atomics.store(this.ctrl, W, (w + need) & POS_MASK);
    this.pushedBytes += advance;
    if (known) this.lastEnd[exporterId] = this.pushedBytes;
    if (Atomics.load(this.ctrl, SLEEP) === 1) Atomics.notify(this.ctrl, W);
    return true;
  }
}

/** One record as the consumer sees it; `payload` is a view into shared memory, valid until `release`. */
export interface RingRecord {
  payload: Buffer;
  source: number;
  socket: number;
  exporterId: number;
  /** Bumped each time the id is given to another address: an id's cached address is valid only for its generation. */
  exporterGen: number;
  receivedMs: number;
}

/** The decoding thread's side. */
export class RingConsumer extends RingBase {
  private readonly buf: Buffer;
  private readonly rec: RingRecord = { payload: Buffer.alloc(0), source: 0, socket: 0, exporterId: 0, exporterGen: 0, receivedMs: 0 };
  private pendingAdvance = 0;

  constructor(sab: SharedArrayBuffer, layout: RingLayout) {
    super(sab, layout);
    this.buf = Buffer.from(sab, offsets(layout).data, layout.capacity);
  }

  /** The 16 address bytes the producer registered for an id. */
  exporterAddress(id: number): Uint8Array {
    return this.exporterBytes.slice(id * 16, id * 16 + 16);
  }

  /**
   * The oldest record, or undefined when the ring is empty. The returned
   * object is reused; call `release()` when done with it.
   */
  next(): RingRecord | undefined {
    let r = Atomics.load(this.ctrl, R);
    const w = Atomics.load(this.ctrl, W);
    if (r === w) return undefined;
    let off = r & this.mask;
    let len = this.view.getUint32(off, true);
    if (len === WRAP || this.layout.capacity - off < HEADER) {
      r = (r + (this.layout.capacity - off)) & POS_MASK;
      Atomics.store(this.ctrl, R, r);
      if (r === w) return undefined;
      off = 0;
      len = this.view.getUint32(0, true);
    }
    const v = this.view;
    const rec = this.rec;
    rec.source = v.getUint16(off + 4, true);
    rec.socket = v.getUint16(off + 6, true);
    rec.exporterId = v.getUint32(off + 8, true);
    rec.exporterGen = v.getUint32(off + 12, true);
    rec.receivedMs = v.getFloat64(off + 16, true);
    rec.payload = this.buf.subarray(off + HEADER, off + HEADER + len);
    this.pendingAdvance = (HEADER + len + 7) & ~7;
    return rec;
  }

  /** Frees the record last returned by `next()`. */
  release(): void {
    if (this.pendingAdvance === 0) return;
    Atomics.store(this.ctrl, R, (Atomics.load(this.ctrl, R) + this.pendingAdvance) & POS_MASK);
    this.pendingAdvance = 0;
  }

  /** Resolves when the producer publishes something (or after `timeoutMs`). */
  async waitForData(timeoutMs: number): Promise<void> {
    const w = Atomics.load(this.ctrl, W);
    Atomics.store(this.ctrl, SLEEP, 1);
    try {
      if (Atomics.load(this.ctrl, R) !== w) return;
      const res = waitAsync(this.ctrl, W, w, timeoutMs);
      if (res.async) await res.value;
    } finally {
      Atomics.store(this.ctrl, SLEEP, 0);
    }
  }
}
