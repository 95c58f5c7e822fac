/** The queue between a socket and the drain loop when the socket is read on the decoding thread (no socket thread). */

/** Datagrams waiting to be decoded: `peek()` the oldest, read its fields, then `drop()` it. */
export interface QueuedDatagrams {
  readonly count: number;
  readonly highWater: number;
  peek(): number;
  payload(i: number): Buffer;
  addr(i: number): string;
  time(i: number): number;
  source(i: number): number;
  drop(): void;
}

/** Ring buffer of datagrams waiting to be decoded, filled by a socket on this thread; bounded in count and bytes. */
export class DatagramQueue implements QueuedDatagrams {
  private readonly payloads: (Buffer | undefined)[];
  private readonly addrs: string[];
  private readonly times: Float64Array;
  private readonly sources: Uint16Array;
  private head = 0;
  count = 0;
  bytes = 0;
  highWater = 0;

  constructor(
    readonly capacity: number,
    readonly maxBytes: number,
  ) {
    this.payloads = new Array<Buffer | undefined>(capacity);
    this.addrs = new Array<string>(capacity).fill('');
    this.times = new Float64Array(capacity);
    this.sources = new Uint16Array(capacity);
  }

  push(payload: Buffer, addr: string, time: number, source: number): boolean {
    if (this.count >= this.capacity || this.bytes + payload.length > this.maxBytes) return false;
    const i = (this.head + this.count) % this.capacity;
    this.payloads[i] = payload;
    this.addrs[i] = addr;
    this.times[i] = time;
    this.sources[i] = source;
    this.count++;
    this.bytes += payload.length;
    if (this.count > this.highWater) this.highWater = this.count;
    return true;
  }

  /** Index of the oldest entry; read its fields, then `drop()`. */
  peek(): number {
    return this.head;
  }

  payload(i: number): Buffer {
    return this.payloads[i]!;
  }

  addr(i: number): string {
    return this.addrs[i]!;
  }

  time(i: number): number {
    return this.times[i]!;
  }

  source(i: number): number {
    return this.sources[i]!;
  }

  drop(): void {
    const i = this.head;
    this.bytes -= this.payloads[i]!.length;
    // Let the datagram and its sender's address string be collected now: held until the
    // slot came round again (64 Ki datagrams later) they outlived two scavenges, were
    // promoted, and kept the old generation busy with mark-compacts.
    this.payloads[i] = undefined;
    this.addrs[i] = '';
    this.head = (i + 1) % this.capacity;
    this.count--;
  }
}
