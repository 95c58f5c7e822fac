/**
 * A bounded queue of received datagrams in shared memory, between the
 * thread that reads a flow socket (one writer) and the thread that decodes
 * (one reader): GoFlow2's receiver → decoder hand-off, for Node threads.
 *
 * Why a separate socket thread at all: a thread that both reads and decodes
 * stops reading while it decodes, and right after a start (code not yet
 * optimised, V8's helpers compiling on every core) a decode stall of a few
 * tens of ms overflowed the 8 MiB kernel buffer at 90 000 datagrams/s. The
 * socket thread only copies each datagram here, so it keeps the kernel
 * buffer empty while decoding catches up; the backlog waits in this ring
 * (128 MiB by default), not in the kernel.
 *
 * Layout: a header of Int32 slots, then a byte ring of records, each
 * 8-aligned: total length (u32), payload length (u32), received time
 * (f64, ms), source index (u16), exporter address length (u8) and text
 * (latin1, ≤ 61 bytes), payload from byte 80. A record never wraps: when
 * the end of the ring has no room, a WRAP mark sends the reader to byte 0.
 * Positions are published with Atomics (release/acquire), so a reader sees
 * a record's bytes once it sees the write position past them.
 *
 * Wake-up: a reader that found the ring empty for a while sets SLEEPING and
 * waits (Atomics.waitAsync); the writer clears it and notifies after its
 * next record. While traffic flows the reader polls instead (no notify per
 * datagram).
 */

/** Atomics.waitAsync (ES2024; in Node since 16), typed here as the project's lib is ES2023. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      a: Int32Array,
      index: number,
      value: number,
      timeoutMs: number,
    ): { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;

/** Header slots (Int32). */
const W_POS = 0;
const R_POS = 1;
const WRITTEN = 2;
const READ = 3;
const SLEEPING = 4;
const HIGH_WATER = 5;
const HEADER_BYTES = 64;
const RECORD_HEAD = 80;
/** Longest exporter address text: an IPv6 address (39) with a zone id. */
const MAX_ADDR = RECORD_HEAD - 19;
const WRAP = 0xffffffff;
/** Smallest byte ring: room for two records of the largest UDP payload. */
export const MIN_RING_BYTES = 2 * (RECORD_HEAD + 65_536);

/** The shared memory of one ring, as handed to both threads. */
export interface DatagramRingMemory {
  readonly buffer: SharedArrayBuffer;
  /** Records the ring holds at most. */
  readonly maxDatagrams: number;
}

/** Allocates a ring of `bytes` (records and their 80-byte heads) and at most `maxDatagrams` records. */
export function createDatagramRing(bytes: number, maxDatagrams: number): DatagramRingMemory {
  if (!Number.isInteger(maxDatagrams) || maxDatagrams < 1 || maxDatagrams > 0x3fffffff)
    throw new RangeError(`maxDatagrams out of range: ${maxDatagrams}`);
  const ringBytes = Math.max(MIN_RING_BYTES, Math.ceil(bytes / 8) * 8);
  if (ringBytes > 0x7fff_fff8) throw new RangeError(`ring too large: ${bytes} bytes`);
  return { buffer: new SharedArrayBuffer(HEADER_BYTES + ringBytes), maxDatagrams };
}

class RingView {
  protected readonly head: Int32Array;
  protected readonly bytes: Buffer;
  protected readonly view: DataView;
  protected readonly capacity: number;
  protected readonly maxDatagrams: number;

  constructor(readonly memory: DatagramRingMemory) {
    const sab = memory.buffer;
    this.head = new Int32Array(sab, 0, HEADER_BYTES / 4);
    this.bytes = Buffer.from(sab, HEADER_BYTES);
    this.view = new DataView(sab, HEADER_BYTES);
    this.capacity = sab.byteLength - HEADER_BYTES;
    this.maxDatagrams = memory.maxDatagrams;
  }

  /** Records written and not yet read. */
  get count(): number {
    return (Atomics.load(this.head, WRITTEN) - Atomics.load(this.head, READ)) | 0;
  }

  /** Most records the ring held at once. */
  get highWater(): number {
    return Atomics.load(this.head, HIGH_WATER);
  }
}

/** The socket thread's end: appends datagrams, or refuses them when the ring is full. */
export class DatagramRingWriter extends RingView {
  private w: number;
  private written: number;

  constructor(memory: DatagramRingMemory) {
    super(memory);
    this.w = Atomics.load(this.head, W_POS);
    this.written = Atomics.load(this.head, WRITTEN);
  }

  /** Appends one datagram; false (nothing written) when the ring is full. */
  push(payload: Uint8Array, address: string, timeMs: number, source: number): boolean {
    const h = this.head;
    const pending = (this.written - Atomics.load(h, READ)) | 0;
    if (pending >= this.maxDatagrams) return false;
    const C = this.capacity;
    const need = (RECORD_HEAD + payload.length + 7) & ~7;
    const r = Atomics.load(h, R_POS);
    let w = this.w;
    let at: number;
    // The write position never catches up with the read position: equal means empty.
    if (w >= r) {
      if (C - w >= need + (r === 0 ? 8 : 0)) at = w;
      else if (r > need) {
        this.view.setUint32(w, WRAP);
        at = 0;
      } else return false;
    } else if (r - w > need) at = w;
    else return false;
    const v = this.view;
    v.setUint32(at, need);
    v.setUint32(at + 4, payload.length);
    v.setFloat64(at + 8, timeMs);
    v.setUint16(at + 16, source);
    v.setUint8(at + 18, this.bytes.write(address, at + 19, MAX_ADDR, 'latin1'));
    this.bytes.set(payload, at + RECORD_HEAD);
    w = at + need;
    if (w === C) w = 0;
    this.w = w;
    this.written = (this.written + 1) | 0;
    // The record is whole before it is published, and published position first: a writer
    // stopped between the two stores (a killed thread; a thrown error cannot land there) leaves
    // a whole record the reader meets one record late, never a torn one. A new writer resumes
    // from these two values (a restarted socket thread).
    Atomics.store(h, W_POS, w);
    Atomics.store(h, WRITTEN, this.written);
    if (pending + 1 > h[HIGH_WATER]!) Atomics.store(h, HIGH_WATER, pending + 1);
    if (Atomics.load(h, SLEEPING) === 1) {
      Atomics.store(h, SLEEPING, 0);
      Atomics.notify(h, SLEEPING);
    }
    return true;
  }

  /** Wakes a sleeping reader without a record (the writer is closing). */
  wake(): void {
    Atomics.store(this.head, SLEEPING, 0);
    Atomics.notify(this.head, SLEEPING);
  }
}

/**
 * The decode thread's end. `peek()` positions on the oldest record; read its
 * fields, then `drop()` it (its bytes may be overwritten from then on, so a
 * payload must not be kept past `drop()`; the decoder copies what it holds).
 */
export class DatagramRingReader extends RingView {
  private r: number;
  private at = -1;
  private lastAddr = '';
  private lastAddrLen = -1;
  private readonly lastAddrBytes = new Uint8Array(MAX_ADDR);

  constructor(memory: DatagramRingMemory) {
    super(memory);
    this.r = Atomics.load(this.head, R_POS);
  }

  /** Position of the oldest record (only when `count > 0`). */
  peek(): number {
    if (this.at >= 0) return this.at;
    let r = this.r;
    if (this.view.getUint32(r) === WRAP) r = 0;
    this.r = r;
    this.at = r;
    return r;
  }

  /** The record's payload: a view into the ring, valid until `drop()`. */
  payload(at: number): Buffer {
    const len = this.view.getUint32(at + 4);
    return Buffer.from(this.memory.buffer, HEADER_BYTES + at + RECORD_HEAD, len);
  }

  /** The record's exporter address (the previous record's string when the text is the same: most come from few exporters). */
  addr(at: number): string {
    const len = this.view.getUint8(at + 18);
    const b = this.bytes;
    const from = at + 19;
    const last = this.lastAddrBytes;
    if (len === this.lastAddrLen) {
      let k = 0;
      while (k < len && b[from + k] === last[k]) k++;
      if (k === len) return this.lastAddr;
    }
    this.lastAddr = b.toString('latin1', from, from + len);
    this.lastAddrLen = len;
    last.set(b.subarray(from, from + len));
    return this.lastAddr;
  }

  time(at: number): number {
    return this.view.getFloat64(at + 8);
  }

  source(at: number): number {
    return this.view.getUint16(at + 16);
  }

  /** Starts the high-water mark again from the records held now (after a warm-up, while the writer is quiet). */
  resetHighWater(): void {
    Atomics.store(this.head, HIGH_WATER, this.count);
  }

  /** Frees the oldest record for the writer. */
  drop(): void {
    const at = this.peek();
    let r = at + this.view.getUint32(at);
    if (r === this.capacity) r = 0;
    this.r = r;
    this.at = -1;
    Atomics.store(this.head, R_POS, r);
    Atomics.add(this.head, READ, 1);
  }

  /**
   * Resolves when a record arrives (or `wake()` is called), or after
   * `timeoutMs`. Sets SLEEPING so that the writer notifies; resolves at once
   * when records are already there.
   */
  async waitForRecords(timeoutMs: number): Promise<void> {
    const h = this.head;
    Atomics.store(h, SLEEPING, 1);
    if (this.count > 0) {
      Atomics.store(h, SLEEPING, 0);
      return;
    }
    const r = waitAsync(h, SLEEPING, 1, timeoutMs);
    if (r.async) await r.value;
    Atomics.store(h, SLEEPING, 0);
  }

  /** Ends a `waitForRecords` of this thread (close). */
  wake(): void {
    Atomics.store(this.head, SLEEPING, 0);
    Atomics.notify(this.head, SLEEPING);
  }
}
