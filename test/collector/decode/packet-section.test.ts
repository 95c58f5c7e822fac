import { describe, expect, it } from 'vitest';
import { formatAddress } from '../../../common/flow-batch.js';
import {
  newPacketHeaders,
  readDataLinkFrame,
  readIpPacket,
  type PacketHeaders,
} from '../../../collector/decode/packet-section.js';
import {
  ETH_IPV4_CUT_IN_TCP,
  ETH_VLAN_IPV4_TCP,
  IPV6_CUT_IN_HEADER,
  IPV6_SRH_IPV4_UDP,
  MPLS_CW_ETH_IPV6_UDP,
} from './packet-section-fixtures.js';
import { xorshift } from '../../helpers/xorshift.js';

/** The parser's answer as plain values (addresses as text). */
function seen(h: PacketHeaders) {
  const one = (a: Uint8Array): string => formatAddress(a, 0);
  return {
    ipVersion: h.ipVersion,
    src: one(h.src),
    dst: one(h.dst),
    proto: h.proto,
    tos: h.tos,
    srcPort: h.srcPort,
    dstPort: h.dstPort,
    tcpFlags: h.tcpFlags,
    ipLength: h.ipLength,
  };
}

function l2(b: Uint8Array): ReturnType<typeof seen> {
  const h = newPacketHeaders();
  readDataLinkFrame(b, 0, b.length, h);
  return seen(h);
}

function l3(b: Uint8Array): ReturnType<typeof seen> {
  const h = newPacketHeaders();
  readIpPacket(b, 0, b.length, h);
  return seen(h);
}

const NOTHING = { ipVersion: 0, src: '::', dst: '::', proto: 0, tos: 0, srcPort: 0, dstPort: 0, tcpFlags: 0, ipLength: 0 };

describe('packet sections', () => {
  it('reads Ethernet + 802.1Q + IPv4 + TCP', () => {
    expect(l2(ETH_VLAN_IPV4_TCP)).toEqual({
      ipVersion: 4,
      src: '192.0.2.1',
      dst: '198.51.100.2',
      proto: 6,
      tos: 0xb8,
      srcPort: 443,
      dstPort: 51_000,
      tcpFlags: 0x18,
      ipLength: 52,
    });
  });

  it('reads QinQ (802.1ad outer tag, 802.1Q inner tag) like a single tag', () => {
    const qinq = Buffer.concat([
      ETH_VLAN_IPV4_TCP.subarray(0, 12),
      Buffer.from('88a8012c', 'hex'),
      ETH_VLAN_IPV4_TCP.subarray(12),
    ]);
    expect(l2(qinq)).toEqual(l2(ETH_VLAN_IPV4_TCP));
  });

  it('reads MPLS to the bottom of the stack, a control word, then the inner Ethernet frame and its IPv6 + UDP', () => {
    expect(l2(MPLS_CW_ETH_IPV6_UDP)).toEqual({
      ipVersion: 6,
      src: '2001:db8:1::1',
      dst: '2001:db8:2::2',
      proto: 17,
      tos: 0x28,
      srcPort: 52_999,
      dstPort: 53,
      tcpFlags: 0,
      ipLength: 56,
    });
  });

  it('reads IP directly after the bottom label by its first nibble (4 or 6), and nothing after another nibble', () => {
    const mplsHead = MPLS_CW_ETH_IPV6_UDP.subarray(0, 22); // Ethernet + two labels
    const ipv6 = MPLS_CW_ETH_IPV6_UDP.subarray(40); // the IPv6 packet
    expect(l2(Buffer.concat([mplsHead, ipv6]))).toMatchObject({ ipVersion: 6, src: '2001:db8:1::1', srcPort: 52_999 });
    const ipv4 = ETH_VLAN_IPV4_TCP.subarray(18);
    expect(l2(Buffer.concat([mplsHead, ipv4]))).toMatchObject({ ipVersion: 4, src: '192.0.2.1', srcPort: 443 });
    // First nibble 1: an associated channel (RFC 4385), not a packet.
    expect(l2(Buffer.concat([mplsHead, Buffer.from('10000000', 'hex'), ipv4]))).toEqual(NOTHING);
  });

  it('reports the inner packet after an SRv6 segment routing header, with the outer packet length', () => {
    expect(l3(IPV6_SRH_IPV4_UDP)).toEqual({
      ipVersion: 4,
      src: '10.1.1.1',
      dst: '10.2.2.2',
      proto: 17,
      tos: 0x10,
      srcPort: 2222,
      dstPort: 1111,
      tcpFlags: 0,
      ipLength: 108,
    });
  });

  it('keeps the outer header when the inner one is cut, and the header when the transport header is cut', () => {
    // The SRv6 packet cut inside the inner IPv4 header: the outer IPv6 header is what is known.
    expect(l3(IPV6_SRH_IPV4_UDP.subarray(0, 95))).toEqual({
      ipVersion: 6,
      src: '2001:db8:a::1',
      dst: '2001:db8:b::100',
      proto: 4,
      tos: 0,
      srcPort: 0,
      dstPort: 0,
      tcpFlags: 0,
      ipLength: 108,
    });
    expect(l2(ETH_IPV4_CUT_IN_TCP)).toEqual({
      ipVersion: 4,
      src: '192.0.2.3',
      dst: '198.51.100.4',
      proto: 6,
      tos: 0,
      srcPort: 0,
      dstPort: 0,
      tcpFlags: 0,
      ipLength: 1500,
    });
    // Ports but not flags: the TCP header is cut after 4 bytes.
    expect(l2(ETH_VLAN_IPV4_TCP.subarray(0, 42))).toMatchObject({ srcPort: 443, dstPort: 51_000, tcpFlags: 0 });
    expect(l3(IPV6_CUT_IN_HEADER)).toEqual(NOTHING);
  });

  it('gives no ports for a fragment other than the first, and ICMP type/code in the destination port', () => {
    const frag = Buffer.from(ETH_VLAN_IPV4_TCP);
    frag.writeUInt16BE(0x00b9, 18 + 6); // fragment offset 185 × 8
    expect(l2(frag)).toMatchObject({ ipVersion: 4, proto: 6, srcPort: 0, dstPort: 0 });
    const icmp = Buffer.from(ETH_VLAN_IPV4_TCP);
    icmp[18 + 9] = 1;
    icmp[38] = 3; // destination unreachable
    icmp[39] = 1; // host unreachable
    expect(l2(icmp)).toMatchObject({ proto: 1, srcPort: 0, dstPort: 3 * 256 + 1 });
  });

  it('reads no transport header from the link-layer padding after a short IP packet', () => {
    // A bare 20-byte IPv4 header (total length 20) padded to Ethernet's 60-byte minimum with 0xff.
    const bare = Buffer.concat([ETH_VLAN_IPV4_TCP.subarray(0, 38), Buffer.alloc(22, 0xff)]);
    bare.writeUInt16BE(20, 18 + 2);
    expect(l2(bare)).toEqual({
      ipVersion: 4,
      src: '192.0.2.1',
      dst: '198.51.100.2',
      proto: 6,
      tos: 0xb8,
      srcPort: 0,
      dstPort: 0,
      tcpFlags: 0,
      ipLength: 20,
    });
  });

  it('never throws nor reads past the section on random and truncated sections', () => {
    const r = xorshift(0x1234_5678);
    const seeds = [
      ETH_VLAN_IPV4_TCP,
      MPLS_CW_ETH_IPV6_UDP,
      ETH_IPV4_CUT_IN_TCP,
      Buffer.concat([Buffer.alloc(14), IPV6_SRH_IPV4_UDP]),
    ];
    seeds[3]!.writeUInt16BE(0x86dd, 12);
    const inside = newPacketHeaders();
    const alone = newPacketHeaders();
    let found = 0;
    for (let k = 0; k < 50_000; k++) {
      const seed = seeds[k % seeds.length]!;
      let section: Buffer;
      if (k % 3 === 0) section = Buffer.from(seed.subarray(0, Math.floor(r() * (seed.length + 1))));
      else if (k % 3 === 1) {
        section = Buffer.from(seed);
        for (let f = 0; f < 1 + Math.floor(r() * 6); f++) section[Math.floor(r() * section.length)] = Math.floor(r() * 256);
      } else section = Buffer.from(Array.from({ length: Math.floor(r() * 160) }, () => Math.floor(r() * 256)));
      // The section inside a larger buffer, followed by bytes that would change the answer if read;
      // the same section alone in a buffer of its exact length. Both must agree.
      const tail = Buffer.from(Array.from({ length: 64 }, () => Math.floor(r() * 256)));
      const big = Buffer.concat([Buffer.alloc(7), section, tail]);
      const ip = k % 2 === 0;
      const read = ip ? readIpPacket : readDataLinkFrame;
      const at = ip ? 14 : 0; // IP sections start past the seed's link-layer header
      const body = section.subarray(Math.min(at, section.length));
      const bigBody = big.subarray(0);
      read(bigBody, 7 + Math.min(at, section.length), 7 + section.length, inside);
      read(body, 0, body.length, alone);
      expect(seen(inside), `case ${k}: ${section.toString('hex')}`).toEqual(seen(alone));
      if (alone.ipVersion !== 0) found++;
    }
    // Enough of the cases reached an IP header for the comparison to mean something.
    expect(found).toBeGreaterThan(5_000);
  });
});
