/**
 * pcap and pcapng files of export datagrams: a pure reader that yields the
 * UDP datagrams inside (the writer for tests and fixtures is pcap-write.ts).
 *
 * The reader takes bytes (whole file or chunks as they come from a stream)
 * and never touches files or clocks. It understands classic pcap (both byte
 * orders, microsecond and nanosecond magic) and pcapng (SHB, IDB, EPB, SPB
 * and the obsolete PB; per-interface link type, `if_tsresol` and
 * `if_tsoffset`; several sections with their own byte order). The packets
 * in the records (link types, IP, UDP) are parsed by packet.ts.
 * Every length read from the file is checked against the bytes present; a
 * record that does not hold together is counted and skipped, and a file that
 * breaks off yields every record before the break plus a counter.
 */
import { parsePacket, type PacketCounters, type UdpDatagram } from './packet.js';

/** What the reader saw; every skipped record lands in exactly one counter (the packet ones in PacketCounters). */
export interface CaptureCounters extends PacketCounters {
  /** Packet records read (pcap records, pcapng EPB/SPB/PB). */
  records: number;
  /** pcapng blocks skipped as unknown (name resolution, statistics, …); not an error. */
  otherBlocks: number;
  /** 1 when the file structure broke (bad magic, impossible length, cut-off tail); reading stopped there. */
  fileErrors: number;
}

// File magics and pcapng block types (the writer, pcap-write.ts, uses them too).
export const PCAP_MAGIC_US = 0xa1b2c3d4;
export const PCAP_MAGIC_NS = 0xa1b23c4d;
export const PCAPNG_SHB = 0x0a0d0d0a;
export const PCAPNG_BOM = 0x1a2b3c4d;
export const PCAPNG_IDB = 1;
const PCAPNG_PB = 2;
const PCAPNG_SPB = 3;
export const PCAPNG_EPB = 6;
/** Largest record or block accepted; anything larger means the file is damaged (libpcap uses 256 KiB for records). */
const MAX_RECORD = 16 * 1024 * 1024;

/** Zeroed counters. */
export function emptyCaptureCounters(): CaptureCounters {
  return {
    records: 0,
    udpDatagrams: 0,
    notUdp: 0,
    fragments: 0,
    truncated: 0,
    malformed: 0,
    unsupportedLinkType: 0,
    otherBlocks: 0,
    fileErrors: 0,
  };
}

interface Iface {
  linkType: number;
  snaplen: number;
  /** Timestamp units per second as a decimal power (10^k) or binary power (2^k). */
  resolDecimal: boolean;
  resolExp: number;
  offsetSec: number;
}

type State = 'start' | 'pcap' | 'pcapng' | 'broken';

/**
 * Incremental capture reader: `push` chunks in file order, `end` when done.
 * Datagrams are handed to the callback as soon as their record is complete.
 */
export class CaptureReader {
  readonly counters: CaptureCounters = emptyCaptureCounters();
  /** 'pcap' or 'pcapng' once the first bytes are seen. */
  format: 'pcap' | 'pcapng' | undefined;
  private state: State = 'start';
  private pending: Buffer = Buffer.alloc(0);
  private le = true;
  private nanos = false;
  private pcapLink = 0;
  private pcapSnap = 0;
  private ifaces: Iface[] = [];
  private lastTimeMs = 0;

  /** Feeds the next bytes of the file; calls `emit` for each UDP datagram completed by them. */
  push(chunk: Uint8Array, emit: (d: UdpDatagram) => void): void {
    if (this.state === 'broken') return;
    const data = this.pending.length === 0 ? toBuffer(chunk) : Buffer.concat([this.pending, chunk]);
    const used = this.parse(data, emit);
    // Keep only the unparsed tail; views already emitted keep their own reference to `data`.
    this.pending = used >= data.length ? Buffer.alloc(0) : data.subarray(used);
  }

  /** Marks the end of the file; a partial record left over counts as a file error. */
  end(): void {
    if (this.state === 'broken') return;
    if (this.pending.length > 0 || this.state === 'start') this.counters.fileErrors = 1;
    this.pending = Buffer.alloc(0);
  }

  private fail(): number {
    this.state = 'broken';
    this.counters.fileErrors = 1;
    this.pending = Buffer.alloc(0);
    return Number.MAX_SAFE_INTEGER;
  }

  private u16(b: Buffer, o: number): number {
    return this.le ? b.readUInt16LE(o) : b.readUInt16BE(o);
  }

  private u32(b: Buffer, o: number): number {
    return this.le ? b.readUInt32LE(o) : b.readUInt32BE(o);
  }

  private parse(b: Buffer, emit: (d: UdpDatagram) => void): number {
    let off = 0;
    if (this.state === 'start') {
      if (b.length < 4) return 0;
      const be = b.readUInt32BE(0);
      const lem = b.readUInt32LE(0);
      if (be === PCAPNG_SHB) {
        this.state = 'pcapng';
        this.format = 'pcapng';
      } else if (be === PCAP_MAGIC_US || be === PCAP_MAGIC_NS || lem === PCAP_MAGIC_US || lem === PCAP_MAGIC_NS) {
        if (b.length < 24) return 0;
        this.le = lem === PCAP_MAGIC_US || lem === PCAP_MAGIC_NS;
        this.nanos = (this.le ? lem : be) === PCAP_MAGIC_NS;
        this.pcapSnap = this.u32(b, 16);
        // The top bits of the link-type word carry FCS information (pcap-savefile(5)).
        this.pcapLink = this.u32(b, 20) & 0x0fffffff;
        this.state = 'pcap';
        this.format = 'pcap';
        off = 24;
      } else {
        return this.fail();
      }
    }
    return this.state === 'pcap' ? this.parsePcap(b, off, emit) : this.parsePcapng(b, off, emit);
  }

  private parsePcap(b: Buffer, off: number, emit: (d: UdpDatagram) => void): number {
    while (off + 16 <= b.length) {
      const sec = this.u32(b, off);
      const frac = this.u32(b, off + 4);
      const incl = this.u32(b, off + 8);
      const orig = this.u32(b, off + 12);
      if (incl > MAX_RECORD || (this.pcapSnap > 0 && incl > Math.max(this.pcapSnap, 262144))) return this.fail();
      if (off + 16 + incl > b.length) break;
      const timeMs = sec * 1000 + Math.floor(this.nanos ? frac / 1e6 : frac / 1e3);
      this.counters.records++;
      parsePacket(this.counters, this.pcapLink, b, off + 16, off + 16 + incl, incl < orig, timeMs, emit);
      off += 16 + incl;
    }
    return off;
  }

  private parsePcapng(b: Buffer, off: number, emit: (d: UdpDatagram) => void): number {
    while (off + 12 <= b.length) {
      const rawType = b.readUInt32LE(off);
      if (rawType === PCAPNG_SHB) {
        // A section header sets the byte order of everything up to the next one.
        const bom = b.readUInt32LE(off + 8);
        if (bom === PCAPNG_BOM) this.le = true;
        else if (b.readUInt32BE(off + 8) === PCAPNG_BOM) this.le = false;
        else return this.fail();
      }
      const type = this.u32(b, off);
      const len = this.u32(b, off + 4);
      if (len < 12 || len % 4 !== 0 || len > MAX_RECORD) return this.fail();
      if (off + len > b.length) break;
      if (this.u32(b, off + len - 4) !== len) return this.fail();
      const body = off + 8;
      const bodyEnd = off + len - 4;
      switch (type) {
        case PCAPNG_SHB:
          if (bodyEnd - body < 16) return this.fail();
          this.ifaces = [];
          break;
        case PCAPNG_IDB:
          if (bodyEnd - body < 8) return this.fail();
          this.ifaces.push(this.readIdb(b, body, bodyEnd));
          break;
        case PCAPNG_EPB:
        case PCAPNG_PB:
          this.packetBlock(type, b, body, bodyEnd, emit);
          break;
        case PCAPNG_SPB:
          this.simpleBlock(b, body, bodyEnd, emit);
          break;
        default:
          this.counters.otherBlocks++;
      }
      off += len;
    }
    return off;
  }

  private readIdb(b: Buffer, body: number, end: number): Iface {
    const iface: Iface = {
      linkType: this.u16(b, body),
      snaplen: this.u32(b, body + 4),
      resolDecimal: true,
      resolExp: 6,
      offsetSec: 0,
    };
    let o = body + 8;
    while (o + 4 <= end) {
      const code = this.u16(b, o);
      const olen = this.u16(b, o + 2);
      if (code === 0 || o + 4 + olen > end) break;
      if (code === 9 && olen >= 1) {
        const v = b[o + 4]!;
        iface.resolDecimal = (v & 0x80) === 0;
        iface.resolExp = v & 0x7f;
      } else if (code === 14 && olen >= 8) {
        const hi = this.le ? b.readInt32LE(o + 8) : b.readInt32BE(o + 4);
        const lo = this.le ? b.readUInt32LE(o + 4) : b.readUInt32BE(o + 8);
        iface.offsetSec = hi * 4294967296 + lo;
      }
      o += 4 + ((olen + 3) & ~3);
    }
    return iface;
  }

  private packetBlock(type: number, b: Buffer, body: number, end: number, emit: (d: UdpDatagram) => void): void {
    this.counters.records++;
    if (end - body < 20) {
      this.counters.malformed++;
      return;
    }
    const ifId = type === PCAPNG_EPB ? this.u32(b, body) : this.u16(b, body);
    const hi = this.u32(b, body + 4);
    const lo = this.u32(b, body + 8);
    const cap = this.u32(b, body + 12);
    const orig = this.u32(b, body + 16);
    const iface = this.ifaces[ifId];
    if (!iface) {
      this.counters.malformed++;
      return;
    }
    if (body + 20 + cap > end) {
      this.counters.malformed++;
      return;
    }
    const timeMs = tsToMs(hi, lo, iface);
    this.lastTimeMs = timeMs;
    parsePacket(this.counters, iface.linkType, b, body + 20, body + 20 + cap, cap < orig, timeMs, emit);
  }

  private simpleBlock(b: Buffer, body: number, end: number, emit: (d: UdpDatagram) => void): void {
    this.counters.records++;
    const iface = this.ifaces[0];
    if (!iface || end - body < 4) {
      this.counters.malformed++;
      return;
    }
    const orig = this.u32(b, body);
    let cap = Math.min(orig, end - body - 4);
    if (iface.snaplen > 0) cap = Math.min(cap, iface.snaplen);
    // An SPB has no timestamp; the time of the previous timed packet is the best estimate.
    parsePacket(this.counters, iface.linkType, b, body + 4, body + 4 + cap, cap < orig, this.lastTimeMs, emit);
  }
}

function toBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

const TWO32 = 4294967296;

function tsToMs(hi: number, lo: number, iface: Iface): number {
  const units = hi * TWO32 + lo;
  let ms: number;
  if (iface.resolDecimal && units <= Number.MAX_SAFE_INTEGER) {
    const k = iface.resolExp;
    ms = k >= 3 ? Math.floor(units / 10 ** (k - 3)) : units * 10 ** (3 - k);
  } else {
    // Nanosecond and binary-fraction stamps exceed 2^53; BigInt keeps the millisecond exact.
    const big = (BigInt(hi) << 32n) | BigInt(lo);
    const per = iface.resolDecimal ? 10n ** BigInt(iface.resolExp) : 1n << BigInt(iface.resolExp);
    ms = Number((big * 1000n) / per);
  }
  return ms + iface.offsetSec * 1000;
}

/** Reads a whole capture held in memory; returns the datagrams and the counters. */
export function readCapture(data: Uint8Array): {
  datagrams: UdpDatagram[];
  counters: CaptureCounters;
  format?: 'pcap' | 'pcapng';
} {
  const reader = new CaptureReader();
  const datagrams: UdpDatagram[] = [];
  reader.push(data, (d) => datagrams.push(d));
  reader.end();
  return { datagrams, counters: reader.counters, format: reader.format };
}
