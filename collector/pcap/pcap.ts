/**
 * pcap and pcapng files of export datagrams: a pure reader that yields the
 * UDP datagrams inside, and a small writer for tests and fixtures.
 *
 * The reader takes bytes (whole file or chunks as they come from a stream)
 * and never touches files or clocks. It understands classic pcap (both byte
 * orders, microsecond and nanosecond magic) and pcapng (SHB, IDB, EPB, SPB
 * and the obsolete PB; per-interface link type, `if_tsresol` and
 * `if_tsoffset`; several sections with their own byte order). Link types:
 * Ethernet with 802.1Q/802.1ad tags, Linux cooked SLL and SLL2, raw IP
 * (101, DLT_RAW 12/14, IPv4 228, IPv6 229), BSD null and OpenBSD loop.
 * Every length read from the file is checked against the bytes present; a
 * record that does not hold together is counted and skipped, and a file that
 * breaks off yields every record before the break plus a counter.
 */

/** One UDP datagram found in a capture. */
export interface UdpDatagram {
  /** Record time, ms since the epoch (sub-millisecond part dropped). */
  timeMs: number;
  /** 4 for IPv4, 6 for IPv6. */
  ipVersion: 4 | 6;
  /** Source address as text (dotted quad or RFC 5952 IPv6). */
  srcAddr: string;
  dstAddr: string;
  /** Raw source address bytes (4 or 16), a view into the capture. */
  srcIp: Uint8Array;
  dstIp: Uint8Array;
  srcPort: number;
  dstPort: number;
  /** UDP payload, a view into the capture bytes (not a copy). */
  payload: Buffer;
}

/** What the reader saw; every skipped record lands in exactly one counter. */
export interface CaptureCounters {
  /** Packet records read (pcap records, pcapng EPB/SPB/PB). */
  records: number;
  /** UDP datagrams yielded. */
  udpDatagrams: number;
  /** Records that are IP but not UDP, or not IP at all. */
  notUdp: number;
  /** IPv4/IPv6 fragments (only whole datagrams are used). */
  fragments: number;
  /** Records cut short by the capture's snap length. */
  truncated: number;
  /** Records whose own headers contradict their length. */
  malformed: number;
  /** Records on an interface whose link type is not understood. */
  unsupportedLinkType: number;
  /** pcapng blocks skipped as unknown (name resolution, statistics, …); not an error. */
  otherBlocks: number;
  /** 1 when the file structure broke (bad magic, impossible length, cut-off tail); reading stopped there. */
  fileErrors: number;
}

/** Link-layer header types (LINKTYPE_* values) the reader and writer know. */
export const LINKTYPE = {
  NULL: 0,
  ETHERNET: 1,
  RAW_12: 12,
  RAW_14: 14,
  RAW: 101,
  LOOP: 108,
  LINUX_SLL: 113,
  IPV4: 228,
  IPV6: 229,
  LINUX_SLL2: 276,
} as const;

const PCAP_MAGIC_US = 0xa1b2c3d4;
const PCAP_MAGIC_NS = 0xa1b23c4d;
const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BOM = 0x1a2b3c4d;
const PCAPNG_IDB = 1;
const PCAPNG_PB = 2;
const PCAPNG_SPB = 3;
const PCAPNG_EPB = 6;
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
      this.packet(this.pcapLink, b, off + 16, off + 16 + incl, incl < orig, timeMs, emit);
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
    this.packet(iface.linkType, b, body + 20, body + 20 + cap, cap < orig, timeMs, emit, true);
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
    this.packet(iface.linkType, b, body + 4, body + 4 + cap, cap < orig, this.lastTimeMs, emit, true);
  }

  private packet(
    linkType: number,
    b: Buffer,
    start: number,
    end: number,
    cut: boolean,
    timeMs: number,
    emit: (d: UdpDatagram) => void,
    counted = false,
  ): void {
    if (!counted) this.counters.records++;
    const c = this.counters;
    let o = start;
    let etherType: number;
    switch (linkType) {
      case LINKTYPE.ETHERNET: {
        if (end - o < 14) return void (cut ? c.truncated++ : c.malformed++);
        etherType = b.readUInt16BE(o + 12);
        o += 14;
        // 802.1Q, 802.1ad and the old QinQ value; any depth.
        while (etherType === 0x8100 || etherType === 0x88a8 || etherType === 0x9100) {
          if (end - o < 4) return void (cut ? c.truncated++ : c.malformed++);
          etherType = b.readUInt16BE(o + 2);
          o += 4;
        }
        break;
      }
      case LINKTYPE.LINUX_SLL:
        if (end - o < 16) return void (cut ? c.truncated++ : c.malformed++);
        etherType = b.readUInt16BE(o + 14);
        o += 16;
        break;
      case LINKTYPE.LINUX_SLL2:
        if (end - o < 20) return void (cut ? c.truncated++ : c.malformed++);
        etherType = b.readUInt16BE(o);
        o += 20;
        break;
      case LINKTYPE.RAW:
      case LINKTYPE.RAW_12:
      case LINKTYPE.RAW_14:
        if (end - o < 1) return void (cut ? c.truncated++ : c.malformed++);
        etherType = b[o]! >> 4 === 6 ? 0x86dd : 0x0800;
        break;
      case LINKTYPE.IPV4:
        etherType = 0x0800;
        break;
      case LINKTYPE.IPV6:
        etherType = 0x86dd;
        break;
      case LINKTYPE.NULL:
      case LINKTYPE.LOOP: {
        if (end - o < 4) return void (cut ? c.truncated++ : c.malformed++);
        // NULL stores AF_ in the capturing host's order, LOOP in network order.
        let fam = b.readUInt32BE(o);
        if (linkType === LINKTYPE.NULL && fam > 0xffff) fam = b.readUInt32LE(o);
        o += 4;
        if (fam === 2) etherType = 0x0800;
        else if (fam === 10 || fam === 24 || fam === 28 || fam === 30) etherType = 0x86dd;
        else return void c.notUdp++;
        break;
      }
      default:
        c.unsupportedLinkType++;
        return;
    }
    if (etherType === 0x0800) this.ipv4(b, o, end, cut, timeMs, emit);
    else if (etherType === 0x86dd) this.ipv6(b, o, end, cut, timeMs, emit);
    else c.notUdp++;
  }

  private ipv4(b: Buffer, o: number, end: number, cut: boolean, timeMs: number, emit: (d: UdpDatagram) => void): void {
    const c = this.counters;
    if (end - o < 20) return void (cut ? c.truncated++ : c.malformed++);
    const vihl = b[o]!;
    const ihl = (vihl & 0x0f) * 4;
    if (vihl >> 4 !== 4 || ihl < 20) return void c.malformed++;
    const total = b.readUInt16BE(o + 2);
    if (total < ihl) return void c.malformed++;
    // Ethernet pads short frames; the IP total length says where the packet ends.
    if (o + total > end) return void (cut ? c.truncated++ : c.malformed++);
    const ipEnd = o + total;
    if ((b.readUInt16BE(o + 6) & 0x3fff) !== 0) return void c.fragments++;
    if (b[o + 9] !== 17) return void c.notUdp++;
    this.udp(b, o + ihl, ipEnd, cut, timeMs, 4, b.subarray(o + 12, o + 16), b.subarray(o + 16, o + 20), emit);
  }

  private ipv6(b: Buffer, o: number, end: number, cut: boolean, timeMs: number, emit: (d: UdpDatagram) => void): void {
    const c = this.counters;
    if (end - o < 40) return void (cut ? c.truncated++ : c.malformed++);
    if (b[o]! >> 4 !== 6) return void c.malformed++;
    const plen = b.readUInt16BE(o + 4);
    // Payload length 0 means a jumbogram (hop-by-hop option); export datagrams never are.
    if (plen === 0) return void c.malformed++;
    const ipEnd = o + 40 + plen;
    if (ipEnd > end) return void (cut ? c.truncated++ : c.malformed++);
    let nh = b[o + 6]!;
    let p = o + 40;
    // Bounded walk of the extension header chain.
    for (let hops = 0; hops < 16; hops++) {
      if (nh === 17) {
        this.udp(b, p, ipEnd, cut, timeMs, 6, b.subarray(o + 8, o + 24), b.subarray(o + 24, o + 40), emit);
        return;
      }
      if (nh === 0 || nh === 43 || nh === 60 || nh === 51 || nh === 44) {
        if (ipEnd - p < 8) return void c.malformed++;
        if (nh === 44) {
          const fo = b.readUInt16BE(p + 2);
          // An atomic fragment (offset 0, no more fragments) is a whole datagram.
          if ((fo & 0xfff9) !== 0) return void c.fragments++;
          nh = b[p]!;
          p += 8;
          continue;
        }
        const hlen = nh === 51 ? (b[p + 1]! + 2) * 4 : (b[p + 1]! + 1) * 8;
        if (ipEnd - p < hlen) return void c.malformed++;
        nh = b[p]!;
        p += hlen;
        continue;
      }
      c.notUdp++;
      return;
    }
    c.malformed++;
  }

  private udp(
    b: Buffer,
    u: number,
    ipEnd: number,
    cut: boolean,
    timeMs: number,
    ipVersion: 4 | 6,
    src: Buffer,
    dst: Buffer,
    emit: (d: UdpDatagram) => void,
  ): void {
    const c = this.counters;
    if (ipEnd - u < 8) return void (cut ? c.truncated++ : c.malformed++);
    const ulen = b.readUInt16BE(u + 4);
    if (ulen < 8) return void c.malformed++;
    if (u + ulen > ipEnd) return void (cut ? c.truncated++ : c.malformed++);
    c.udpDatagrams++;
    emit({
      timeMs,
      ipVersion,
      srcAddr: formatIp(src),
      dstAddr: formatIp(dst),
      srcIp: src,
      dstIp: dst,
      srcPort: b.readUInt16BE(u),
      dstPort: b.readUInt16BE(u + 2),
      payload: b.subarray(u + 8, u + ulen),
    });
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

/** Formats 4 or 16 address bytes as text (RFC 5952 for IPv6). */
export function formatIp(a: Uint8Array): string {
  if (a.length === 4) return `${a[0]}.${a[1]}.${a[2]}.${a[3]}`;
  const words: number[] = [];
  for (let k = 0; k < 16; k += 2) words.push((a[k]! << 8) | a[k + 1]!);
  if (words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 0 && words[4] === 0 && words[5] === 0xffff) {
    return `::ffff:${a[12]}.${a[13]}.${a[14]}.${a[15]}`;
  }
  let bestStart = -1;
  let bestLen = 1;
  for (let s = 0; s < 8;) {
    if (words[s] !== 0) {
      s++;
      continue;
    }
    let e = s;
    while (e < 8 && words[e] === 0) e++;
    if (e - s > bestLen) {
      bestStart = s;
      bestLen = e - s;
    }
    s = e;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
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

// ---------------------------------------------------------------- writer

/** One datagram to write. */
export interface CaptureRecord {
  /** ms since the epoch; fractions are kept to µs or ns as the file allows. */
  timeMs: number;
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  payload: Uint8Array;
  /** pcapng only: index into `interfaces`. */
  iface?: number;
}

/** Link types the writer can frame. */
export type WriterLinkType = 'ethernet' | 'raw' | 'sll' | 'sll2' | 'null' | 'loop' | 'ipv4' | 'ipv6';

/** A pcapng interface for the writer. */
export interface WriterInterface {
  linkType: WriterLinkType;
  /** Decimal exponent of the timestamp unit (6 = µs, 9 = ns); default 6. */
  tsresol?: number;
  /** VLAN tag to add on Ethernet (802.1Q). */
  vlan?: number;
}

/** Options of `writeCapture`. */
export interface CaptureWriteOptions {
  format?: 'pcap' | 'pcapng';
  /** pcap only. */
  linkType?: WriterLinkType;
  /** pcap only: nanosecond magic instead of microseconds. */
  nanosecond?: boolean;
  /** Byte order of the file headers; default little-endian. */
  bigEndian?: boolean;
  /** pcap only: VLAN tag on Ethernet. */
  vlan?: number;
  /** pcapng only; default one interface with `linkType`. */
  interfaces?: WriterInterface[];
}

const LINK_NUMBERS: Record<WriterLinkType, number> = {
  ethernet: LINKTYPE.ETHERNET,
  raw: LINKTYPE.RAW,
  sll: LINKTYPE.LINUX_SLL,
  sll2: LINKTYPE.LINUX_SLL2,
  null: LINKTYPE.NULL,
  loop: LINKTYPE.LOOP,
  ipv4: LINKTYPE.IPV4,
  ipv6: LINKTYPE.IPV6,
};

/** Builds a pcap or pcapng file holding the given UDP datagrams. */
export function writeCapture(records: readonly CaptureRecord[], opts: CaptureWriteOptions = {}): Buffer {
  const le = !opts.bigEndian;
  const parts: Buffer[] = [];
  if ((opts.format ?? 'pcap') === 'pcap') {
    const link = opts.linkType ?? 'ethernet';
    const head = Buffer.alloc(24);
    w32(head, 0, opts.nanosecond ? PCAP_MAGIC_NS : PCAP_MAGIC_US, le);
    w16(head, 4, 2, le);
    w16(head, 6, 4, le);
    w32(head, 16, 262144, le);
    w32(head, 20, LINK_NUMBERS[link], le);
    parts.push(head);
    for (const r of records) {
      const frame = frameDatagram(r, link, opts.vlan);
      const rec = Buffer.alloc(16);
      const sec = Math.floor(r.timeMs / 1000);
      const frac = opts.nanosecond ? Math.round((r.timeMs - sec * 1000) * 1e6) : Math.round((r.timeMs - sec * 1000) * 1e3);
      w32(rec, 0, sec, le);
      w32(rec, 4, frac, le);
      w32(rec, 8, frame.length, le);
      w32(rec, 12, frame.length, le);
      parts.push(rec, frame);
    }
    return Buffer.concat(parts);
  }
  const ifaces = opts.interfaces ?? [{ linkType: opts.linkType ?? 'ethernet' }];
  const shb = Buffer.alloc(28);
  w32(shb, 0, PCAPNG_SHB, le);
  w32(shb, 4, 28, le);
  w32(shb, 8, PCAPNG_BOM, le);
  w16(shb, 12, 1, le);
  w16(shb, 14, 0, le);
  shb.writeInt32LE(-1, 16); // section length unknown (-1 in either order)
  shb.writeInt32LE(-1, 20);
  w32(shb, 24, 28, le);
  parts.push(shb);
  for (const iface of ifaces) {
    const resol = iface.tsresol ?? 6;
    const len = 20 + 8 + 4; // header + tsresol option (padded) + opt_endofopt
    const idb = Buffer.alloc(len + 4);
    w32(idb, 0, PCAPNG_IDB, le);
    w32(idb, 4, len + 4, le);
    w16(idb, 8, LINK_NUMBERS[iface.linkType], le);
    w32(idb, 12, 262144, le);
    w16(idb, 16, 9, le);
    w16(idb, 18, 1, le);
    idb[20] = resol;
    w32(idb, len, len + 4, le);
    parts.push(idb);
  }
  for (const r of records) {
    const ifIndex = r.iface ?? 0;
    const iface = ifaces[ifIndex];
    if (!iface) throw new RangeError(`record names interface ${ifIndex}, which is not declared`);
    const frame = frameDatagram(r, iface.linkType, iface.vlan);
    const padded = (frame.length + 3) & ~3;
    const total = 32 + padded;
    const epb = Buffer.alloc(total);
    const units = (BigInt(Math.round(r.timeMs * 1000)) * 10n ** BigInt(iface.tsresol ?? 6)) / 1_000_000n;
    w32(epb, 0, PCAPNG_EPB, le);
    w32(epb, 4, total, le);
    w32(epb, 8, ifIndex, le);
    w32(epb, 12, Number(units >> 32n), le);
    w32(epb, 16, Number(units & 0xffffffffn), le);
    w32(epb, 20, frame.length, le);
    w32(epb, 24, frame.length, le);
    frame.copy(epb, 28);
    w32(epb, total - 4, total, le);
    parts.push(epb);
  }
  return Buffer.concat(parts);
}

function w16(b: Buffer, o: number, v: number, le: boolean): void {
  if (le) b.writeUInt16LE(v, o);
  else b.writeUInt16BE(v, o);
}

function w32(b: Buffer, o: number, v: number, le: boolean): void {
  if (le) b.writeUInt32LE(v >>> 0, o);
  else b.writeUInt32BE(v >>> 0, o);
}

/** Parses an IPv4 or IPv6 text address into 4 or 16 bytes. */
export function parseIp(text: string): Uint8Array {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const out = new Uint8Array(4);
    for (let i = 0; i < 4; i++) {
      const n = Number(v4[i + 1]);
      if (n > 255) throw new RangeError(`not an IP address: ${text}`);
      out[i] = n;
    }
    return out;
  }
  let s = text;
  const out = new Uint8Array(16);
  // A trailing dotted quad (::ffff:1.2.3.4) fills the last four bytes.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  let tailBytes: Uint8Array | undefined;
  if (tail) {
    tailBytes = parseIp(tail[2]!);
    s = `${tail[1]}0:0`;
  }
  const halves = s.split('::');
  if (halves.length > 2 || !/^[0-9a-fA-F:]+$/.test(s)) throw new RangeError(`not an IP address: ${text}`);
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = 8 - head.length - rest.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0) throw new RangeError(`not an IP address: ${text}`);
  const words = [...head, ...new Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...rest];
  words.forEach((w, i) => {
    if (!/^[0-9a-fA-F]{1,4}$/.test(w)) throw new RangeError(`not an IP address: ${text}`);
    const n = parseInt(w, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  if (tailBytes) out.set(tailBytes, 12);
  return out;
}

function checksum(parts: Uint8Array[], initial = 0): number {
  let sum = initial;
  for (const p of parts) {
    for (let i = 0; i + 1 < p.length; i += 2) sum += (p[i]! << 8) | p[i + 1]!;
    if (p.length % 2) sum += p[p.length - 1]! << 8;
  }
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** IP + UDP packet (with valid checksums) for one record, wrapped in the link layer. */
function frameDatagram(r: CaptureRecord, link: WriterLinkType, vlan?: number): Buffer {
  const src = parseIp(r.src);
  const dst = parseIp(r.dst);
  if (src.length !== dst.length) throw new RangeError('source and destination must be the same IP family');
  const v6 = src.length === 16;
  const udpLen = 8 + r.payload.length;
  const udp = Buffer.alloc(udpLen);
  udp.writeUInt16BE(r.srcPort, 0);
  udp.writeUInt16BE(r.dstPort, 2);
  udp.writeUInt16BE(udpLen, 4);
  udp.set(r.payload, 8);
  const pseudoLen = Buffer.alloc(4);
  pseudoLen.writeUInt32BE(udpLen);
  const pseudoProto = Buffer.from([0, 0, 0, 17]);
  const sum = checksum([src, dst, pseudoLen, pseudoProto, udp]);
  udp.writeUInt16BE(sum === 0 ? 0xffff : sum, 6);
  let ip: Buffer;
  if (v6) {
    ip = Buffer.alloc(40);
    ip[0] = 0x60;
    ip.writeUInt16BE(udpLen, 4);
    ip[6] = 17;
    ip[7] = 64;
    ip.set(src, 8);
    ip.set(dst, 24);
  } else {
    ip = Buffer.alloc(20);
    ip[0] = 0x45;
    ip.writeUInt16BE(20 + udpLen, 2);
    ip.writeUInt16BE(0x4000, 6); // DF
    ip[8] = 64;
    ip[9] = 17;
    ip.set(src, 12);
    ip.set(dst, 16);
    ip.writeUInt16BE(checksum([ip]), 10);
  }
  const etherType = v6 ? 0x86dd : 0x0800;
  let l2: Buffer;
  switch (link) {
    case 'ethernet': {
      l2 = Buffer.alloc(vlan === undefined ? 14 : 18);
      l2.set([0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1], 0);
      if (vlan !== undefined) {
        l2.writeUInt16BE(0x8100, 12);
        l2.writeUInt16BE(vlan & 0x0fff, 14);
        l2.writeUInt16BE(etherType, 16);
      } else {
        l2.writeUInt16BE(etherType, 12);
      }
      break;
    }
    case 'sll':
      l2 = Buffer.alloc(16);
      l2.writeUInt16BE(0, 0); // sent to us
      l2.writeUInt16BE(1, 2); // ARPHRD_ETHER
      l2.writeUInt16BE(6, 4);
      l2.set([0x02, 0, 0, 0, 0, 1], 6);
      l2.writeUInt16BE(etherType, 14);
      break;
    case 'sll2':
      l2 = Buffer.alloc(20);
      l2.writeUInt16BE(etherType, 0);
      l2.writeUInt32BE(1, 4); // interface index
      l2.writeUInt16BE(1, 8); // ARPHRD_ETHER
      l2[10] = 0;
      l2[11] = 6;
      l2.set([0x02, 0, 0, 0, 0, 1], 12);
      break;
    case 'null':
      l2 = Buffer.alloc(4);
      l2.writeUInt32LE(v6 ? 30 : 2); // host order of a little-endian BSD
      break;
    case 'loop':
      l2 = Buffer.alloc(4);
      l2.writeUInt32BE(v6 ? 24 : 2);
      break;
    case 'raw':
    case 'ipv4':
    case 'ipv6':
      l2 = Buffer.alloc(0);
      break;
  }
  return Buffer.concat([l2, ip, udp]);
}
