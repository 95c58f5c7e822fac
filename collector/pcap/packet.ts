/**
 * The packets inside a capture: link-layer headers (Ethernet with
 * 802.1Q/802.1ad tags, Linux cooked SLL and SLL2, raw IP (101, DLT_RAW
 * 12/14, IPv4 228, IPv6 229), BSD null and OpenBSD loop), IPv4 and IPv6
 * (extension headers walked, fragments skipped) and UDP. Every length is checked against the bytes present; a
 * packet that does not hold together is counted and skipped. The file
 * containers (pcap, pcapng) are pcap.ts's.
 */
import { formatIp } from './ip-text.js';

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

/** What packet parsing saw; the reader's CaptureCounters add the file-level ones. */
export interface PacketCounters {
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

/**
 * The UDP datagram of one captured packet: link layer, IPv4 or IPv6 (with the
 * extension-header walk), UDP; counts what it skips in `c`.
 */
export function parsePacket(
  c: PacketCounters,
  linkType: number,
  b: Buffer,
  start: number,
  end: number,
  cut: boolean,
  timeMs: number,
  emit: (d: UdpDatagram) => void,
): void {
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
  if (etherType === 0x0800) ipv4(c, b, o, end, cut, timeMs, emit);
  else if (etherType === 0x86dd) ipv6(c, b, o, end, cut, timeMs, emit);
  else c.notUdp++;
}

function ipv4(
  c: PacketCounters,
  b: Buffer,
  o: number,
  end: number,
  cut: boolean,
  timeMs: number,
  emit: (d: UdpDatagram) => void,
): void {
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
  udp(c, b, o + ihl, ipEnd, cut, timeMs, 4, b.subarray(o + 12, o + 16), b.subarray(o + 16, o + 20), emit);
}

function ipv6(
  c: PacketCounters,
  b: Buffer,
  o: number,
  end: number,
  cut: boolean,
  timeMs: number,
  emit: (d: UdpDatagram) => void,
): void {
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
      udp(c, b, p, ipEnd, cut, timeMs, 6, b.subarray(o + 8, o + 24), b.subarray(o + 24, o + 40), emit);
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

function udp(
  c: PacketCounters,
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
