/**
 * Sampled packets as raw sections, byte by byte, and the IPFIX messages that
 * carry them in the layouts packet-sampling exporters use:
 * - template 500, Juniper inline monitoring's default primary data record:
 *   ingressInterface, egressInterface, flowDirection, dataLinkFrameSize,
 *   dataLinkFrameSection (variable length); the sampling rate comes in options
 *   data for the observation domain;
 * - template 501, a fixed-length 128-byte dataLinkFrameSection padded after the
 *   packet, with sectionOffset / sectionExportedOctets (RFC 7133) and the
 *   record's own samplingInterval;
 * - template 502, an ipHeaderPacketSection (variable length) with no
 *   link-layer header, as exporters of IP header sections send it.
 */
import { ipfixMessage, ipfixTemplateRecord, set, uint, varField, type Spec } from './wire.js';

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/#[^\n]*/g, '').replace(/\s+/g, ''), 'hex');
}

/** Ethernet + 802.1Q (VLAN 100) + IPv4 (ToS 0xb8, 52 bytes) + TCP 443 → 51000, PSH|ACK, with timestamps. */
export const ETH_VLAN_IPV4_TCP = hex(`
  001122334455 66778899aabb   # destination, source MAC
  8100 0064                   # 802.1Q, VLAN 100
  0800                        # IPv4
  45 b8 0034 1c46 4000 40 06 0000   # IHL 5, ToS 0xb8, total length 52, DF, TTL 64, TCP
  c0000201 c6336402           # 192.0.2.1 → 198.51.100.2
  01bb c738                   # 443 → 51000
  00000001 00000002           # sequence, acknowledgement
  80 18 01f5 0000 0000        # data offset 8 words, flags PSH|ACK, window, checksum, urgent
  0101080a 00000001 00000002  # NOP NOP timestamps
`);

/** MPLS (labels 24001, 16) + control word + Ethernet + IPv6 (traffic class 0x28) + UDP 52999 → 53. */
export const MPLS_CW_ETH_IPV6_UDP = hex(`
  001122334466 66778899aacc 8847    # MPLS unicast
  05dc1040                    # label 24001, TC 0, not bottom, TTL 64
  0001013f                    # label 16, bottom of stack, TTL 63
  00000000                    # pseudowire control word (RFC 4385)
  020000000001 020000000002 86dd    # inner Ethernet: IPv6
  62800000                    # version 6, traffic class 0x28, flow label 0
  0010 11 40                  # payload 16, UDP, hop limit 64
  20010db8000100000000000000000001  # 2001:db8:1::1
  20010db8000200000000000000000002  # 2001:db8:2::2
  cf07 0035 0010 0000         # 52999 → 53, length 16
  deadbeefdeadbeef
`);

/** IPv6 + SRv6 segment routing header (2 segments, next header IPv4) + IPv4 (ToS 0x10) + UDP 2222 → 1111. */
export const IPV6_SRH_IPV4_UDP = hex(`
  60000000                    # version 6, traffic class 0
  0044 2b 40                  # payload 68, routing header, hop limit 64
  20010db8000a00000000000000000001  # 2001:db8:a::1
  20010db8000b00000000000000000100  # 2001:db8:b::100 (active segment)
  04 04 04 01                 # SRH: next header IPv4, length 4 (32 bytes more), type 4, segments left 1
  01 00 0000                  # last entry 1, flags, tag
  20010db8000c00000000000000000100  # segment list [0]
  20010db8000b00000000000000000100  # segment list [1]
  45 10 001c 0001 0000 3f 11 0000   # inner IPv4: ToS 0x10, total length 28, TTL 63, UDP
  0a010101 0a020202           # 10.1.1.1 → 10.2.2.2
  08ae 0457 0008 0000         # 2222 → 1111
`);

/** Ethernet + IPv4 (1500 bytes long on the wire) cut two bytes into its TCP header. */
export const ETH_IPV4_CUT_IN_TCP = hex(`
  001122334455 66778899aabb 0800
  45 00 05dc 0001 4000 40 06 0000
  c0000203 c6336404           # 192.0.2.3 → 198.51.100.4
  01bb                        # the source port and no more
`);

/** An IPv6 header cut before its destination address. */
export const IPV6_CUT_IN_HEADER = hex(`
  60000000 0010 11 40
  20010db8000a00000000000000000001
  20010db8000b
`);

export const EXPORT_S = 1_700_000_700;
const DOMAIN_INTERVAL = 1000;

const JUNIPER: Spec[] = [
  [10, 4], // ingressInterface
  [14, 4], // egressInterface
  [61, 1], // flowDirection
  [312, 2], // dataLinkFrameSize
  [315, 65535], // dataLinkFrameSection
];
const FIXED: Spec[] = [
  [10, 4],
  [14, 4],
  [34, 4], // samplingInterval
  [409, 2], // sectionOffset
  [410, 2], // sectionExportedOctets
  [312, 2],
  [315, 128],
];
const IP_SECTION: Spec[] = [
  [10, 4],
  [61, 1],
  [313, 65535], // ipHeaderPacketSection
];

function padTo(b: Buffer, n: number): Buffer {
  return Buffer.concat([b, Buffer.alloc(n - b.length)]);
}

/** The messages: templates and the domain's sampling rate (1 in 1000), then one data message. */
export function packetSectionMessages(): Buffer[] {
  const h = { exportSecs: EXPORT_S, domain: 7 };
  return [
    ipfixMessage(
      h,
      set(
        2,
        Buffer.concat([ipfixTemplateRecord(500, JUNIPER), ipfixTemplateRecord(501, FIXED), ipfixTemplateRecord(502, IP_SECTION)]),
      ),
      set(
        3,
        ipfixTemplateRecord(
          400,
          [
            [149, 4],
            [34, 4],
          ],
          1,
        ),
      ),
      set(400, Buffer.concat([uint(7, 4), uint(DOMAIN_INTERVAL, 4)])),
    ),
    ipfixMessage(
      h,
      set(
        500,
        Buffer.concat([
          uint(517, 4),
          uint(0, 4),
          uint(0, 1),
          uint(ETH_VLAN_IPV4_TCP.length + 4, 2),
          varField(ETH_VLAN_IPV4_TCP),
          uint(518, 4),
          uint(0, 4),
          uint(0, 1),
          uint(1518, 2),
          varField(ETH_IPV4_CUT_IN_TCP),
        ]),
      ),
      set(
        501,
        Buffer.concat([
          uint(20, 4),
          uint(21, 4),
          uint(100, 4),
          uint(0, 2),
          uint(MPLS_CW_ETH_IPV6_UDP.length, 2),
          uint(MPLS_CW_ETH_IPV6_UDP.length + 4, 2),
          padTo(MPLS_CW_ETH_IPV6_UDP, 128),
          // The same frame, but the section starts 14 bytes into the packet: not read.
          uint(20, 4),
          uint(21, 4),
          uint(100, 4),
          uint(14, 2),
          uint(MPLS_CW_ETH_IPV6_UDP.length - 14, 2),
          uint(MPLS_CW_ETH_IPV6_UDP.length + 4, 2),
          padTo(MPLS_CW_ETH_IPV6_UDP.subarray(14), 128),
        ]),
      ),
      set(
        502,
        Buffer.concat([
          uint(30, 4),
          uint(0, 1),
          varField(IPV6_SRH_IPV4_UDP),
          uint(31, 4),
          uint(0, 1),
          varField(IPV6_CUT_IN_HEADER),
        ]),
      ),
    ),
  ];
}
