/**
 * A small pcap and pcapng writer for tests and fixtures: UDP datagrams with
 * valid IP and UDP checksums, framed in any link type the reader knows
 * (pcap.ts reads them back).
 */
import { LINKTYPE } from './packet.js';
import { parseIp } from './ip-text.js';
import { PCAP_MAGIC_NS, PCAP_MAGIC_US, PCAPNG_BOM, PCAPNG_EPB, PCAPNG_IDB, PCAPNG_SHB } from './pcap.js';

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
