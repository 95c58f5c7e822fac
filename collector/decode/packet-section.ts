/**
 * Reads the headers of a sampled packet that an exporter sent as raw bytes:
 * dataLinkFrameSection (IE 315, from the Ethernet header on) or
 * ipHeaderPacketSection (IE 313, from the IP header on). Pure and bounded:
 * every read is checked against `end` (the section's end, never the
 * datagram's), loops are capped by a step budget, and nothing throws or
 * allocates; what cannot be read is left at zero.
 *
 * Layers, outermost first:
 * - Ethernet II, then any number (within the budget) of 802.1Q / 802.1ad /
 *   0x9100 tags (QinQ);
 * - MPLS labels down to the one with the bottom-of-stack bit; what follows
 *   has no type field, so its first nibble decides (as Wireshark and
 *   Akvorado guess): 4 = IPv4, 6 = IPv6, 0 = a pseudowire control word
 *   (RFC 4385) followed by an Ethernet frame (Ethernet over MPLS); anything
 *   else is not read. A pseudowire without a control word whose inner
 *   destination MAC address starts with 4 or 6 is misread as IP: the reason
 *   RFC 4385 asks for the control word;
 * - IPv4 (options skipped by IHL), IPv6 and its extension headers (hop-by-hop,
 *   routing, among them the SRv6 segment routing header type 4, fragment,
 *   destination options, AH, mobility);
 * - IP in IP (protocol 4 or 41, as after an SRv6 SRH) and Ethernet in IPv6
 *   (143, SRv6 L2 services): the inner packet's header replaces the outer
 *   one when it is complete, so a tunnelled packet is reported as the
 *   innermost flow, as nfdump and pmacct report tunnel templates;
 * - TCP, UDP, SCTP, UDP-Lite and DCCP ports, TCP flags; ICMP and ICMPv6
 *   type × 256 + code in the destination port (nfdump's convention, as the
 *   template decoder keeps it). A fragment other than the first has no ports.
 */

/** What a section said; fields it did not reach stay 0. Reused from one record to the next. */
export interface PacketHeaders {
  /** 4 or 6: the innermost complete IP header's version; 0 when the section held none. */
  ipVersion: number;
  /** Source and destination, 16 bytes each, IPv4 as IPv4-mapped IPv6 (the FlowBatch layout). */
  readonly src: Uint8Array;
  readonly dst: Uint8Array;
  /** IPv4 protocol or the IPv6 next header after the extension headers it could walk. */
  proto: number;
  /** IPv4 type of service, IPv6 traffic class. */
  tos: number;
  srcPort: number;
  dstPort: number;
  tcpFlags: number;
  /** Total length of the outermost IP header (IPv6: payload length + 40); 0 if unknown. */
  ipLength: number;
}

/** A zeroed headers object, to be reused. */
export function newPacketHeaders(): PacketHeaders {
  return {
    ipVersion: 0,
    src: new Uint8Array(16),
    dst: new Uint8Array(16),
    proto: 0,
    tos: 0,
    srcPort: 0,
    dstPort: 0,
    tcpFlags: 0,
    ipLength: 0,
  };
}

/**
 * Layers a section may stack (tags, labels, extension headers, tunnels) before the parser
 * gives up: far above any real packet, and a bound on the work a hostile section costs.
 */
export const MAX_LAYERS = 32;

const ETH_IPV4 = 0x0800;
const ETH_IPV6 = 0x86dd;
const ETH_MPLS = 0x8847;
const ETH_MPLS_MULTICAST = 0x8848;
const ETH_VLAN = 0x8100;
const ETH_QINQ = 0x88a8;
const ETH_QINQ_OLD = 0x9100;

const IP_IN_IP = 4;
const IPV6_IN_IP = 41;
const ETHERNET_IN_IPV6 = 143;

// Budget left for the section being read; reset by each entry point.
let steps = 0;

function clear(h: PacketHeaders): void {
  h.ipVersion = 0;
  h.src.fill(0);
  h.dst.fill(0);
  h.proto = 0;
  h.tos = 0;
  h.srcPort = 0;
  h.dstPort = 0;
  h.tcpFlags = 0;
  h.ipLength = 0;
}

/** Reads a dataLinkFrameSection `b[p, end)` into `h`; returns the IP version found (0: none). */
export function readDataLinkFrame(b: Uint8Array, p: number, end: number, h: PacketHeaders): number {
  clear(h);
  steps = MAX_LAYERS;
  ethernet(b, p, Math.min(end, b.length), h);
  return h.ipVersion;
}

/** Reads an ipHeaderPacketSection `b[p, end)` into `h`; returns the IP version found (0: none). */
export function readIpPacket(b: Uint8Array, p: number, end: number, h: PacketHeaders): number {
  clear(h);
  steps = MAX_LAYERS;
  const e = Math.min(end, b.length);
  if (p < e) ip(b, p, e, h, b[p]! >> 4);
  return h.ipVersion;
}

function u16(b: Uint8Array, p: number): number {
  return (b[p]! << 8) | b[p + 1]!;
}

function ethernet(b: Uint8Array, p: number, end: number, h: PacketHeaders): void {
  if (end - p < 14) return;
  let type = u16(b, p + 12);
  p += 14;
  while (type === ETH_VLAN || type === ETH_QINQ || type === ETH_QINQ_OLD) {
    if (--steps < 0 || end - p < 4) return;
    type = u16(b, p + 2);
    p += 4;
  }
  if (type === ETH_IPV4) ip(b, p, end, h, 4);
  else if (type === ETH_IPV6) ip(b, p, end, h, 6);
  else if (type === ETH_MPLS || type === ETH_MPLS_MULTICAST) mpls(b, p, end, h);
}

function mpls(b: Uint8Array, p: number, end: number, h: PacketHeaders): void {
  for (;;) {
    if (--steps < 0 || end - p < 4) return;
    const bottom = b[p + 2]! & 1;
    p += 4;
    if (bottom) break;
  }
  if (p >= end) return;
  const nibble = b[p]! >> 4;
  if (nibble === 4 || nibble === 6) ip(b, p, end, h, nibble);
  else if (nibble === 0 && end - p >= 4) ethernet(b, p + 4, end, h);
}

/** Reads an IP header of `version` at p; a complete one overwrites what an outer header left in `h`. */
function ip(b: Uint8Array, p: number, end: number, h: PacketHeaders, version: number): void {
  if (--steps < 0) return;
  if (version === 4) ipv4(b, p, end, h);
  else if (version === 6) ipv6(b, p, end, h);
}

function setV4(a: Uint8Array, b: Uint8Array, p: number): void {
  a.fill(0, 0, 10);
  a[10] = 0xff;
  a[11] = 0xff;
  a[12] = b[p]!;
  a[13] = b[p + 1]!;
  a[14] = b[p + 2]!;
  a[15] = b[p + 3]!;
}

function ipv4(b: Uint8Array, p: number, end: number, h: PacketHeaders): void {
  if (end - p < 20 || b[p]! >> 4 !== 4) return;
  const ihl = (b[p]! & 0x0f) * 4;
  if (ihl < 20) return;
  const outermost = h.ipVersion === 0;
  h.ipVersion = 4;
  setV4(h.src, b, p + 12);
  setV4(h.dst, b, p + 16);
  h.tos = b[p + 1]!;
  h.proto = b[p + 9]!;
  h.srcPort = 0;
  h.dstPort = 0;
  h.tcpFlags = 0;
  const total = u16(b, p + 2);
  if (outermost) h.ipLength = total;
  if ((u16(b, p + 6) & 0x1fff) !== 0) return; // not the first fragment: no transport header
  // Bytes after the packet's own length are link-layer padding, not a transport header.
  above(b, p + ihl, total >= ihl ? Math.min(end, p + total) : end, h);
}

function ipv6(b: Uint8Array, p: number, end: number, h: PacketHeaders): void {
  if (end - p < 40 || b[p]! >> 4 !== 6) return;
  const outermost = h.ipVersion === 0;
  h.ipVersion = 6;
  h.src.set(b.subarray(p + 8, p + 24));
  h.dst.set(b.subarray(p + 24, p + 40));
  h.tos = ((b[p]! & 0x0f) << 4) | (b[p + 1]! >> 4);
  h.srcPort = 0;
  h.dstPort = 0;
  h.tcpFlags = 0;
  const payload = u16(b, p + 4);
  // 0 is a jumbogram's (RFC 2675): its length is in an option; left unknown.
  if (outermost) h.ipLength = payload === 0 ? 0 : payload + 40;
  // Bytes after the packet's own length are link-layer padding, not headers.
  if (payload !== 0) end = Math.min(end, p + 40 + payload);
  let next = b[p + 6]!;
  p += 40;
  for (;;) {
    h.proto = next;
    if (next === 0 || next === 43 || next === 60 || next === 135 || next === 51 || next === 44) {
      if (--steps < 0 || end - p < 8) return;
      const following = b[p]!;
      if (next === 44) {
        if (u16(b, p + 2) >> 3 !== 0) {
          h.proto = following;
          return; // not the first fragment
        }
        p += 8;
      } else if (next === 51) p += (b[p + 1]! + 2) * 4;
      else p += (b[p + 1]! + 1) * 8;
      next = following;
      continue;
    }
    break;
  }
  above(b, p, end, h);
}

/** What follows an IP header at p, its protocol in h.proto: a tunnelled packet or a transport header. */
function above(b: Uint8Array, p: number, end: number, h: PacketHeaders): void {
  if (p >= end) return;
  switch (h.proto) {
    case IP_IN_IP:
      ip(b, p, end, h, 4);
      return;
    case IPV6_IN_IP:
      ip(b, p, end, h, 6);
      return;
    case ETHERNET_IN_IPV6:
      if (--steps >= 0) ethernet(b, p, end, h);
      return;
    case 6:
      if (end - p >= 4) {
        h.srcPort = u16(b, p);
        h.dstPort = u16(b, p + 2);
      }
      if (end - p >= 14) h.tcpFlags = b[p + 13]!;
      return;
    case 17:
    case 33:
    case 132:
    case 136:
      if (end - p >= 4) {
        h.srcPort = u16(b, p);
        h.dstPort = u16(b, p + 2);
      }
      return;
    case 1:
    case 58:
      if (end - p >= 2) h.dstPort = (b[p]! << 8) | b[p + 1]!;
      return;
    default:
      return;
  }
}
