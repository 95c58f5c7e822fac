/**
 * Two-way export datagrams, byte by byte, in the layouts their exporters use:
 * - YAF-style RFC 5103 biflows over IPFIX (template layout of YAF's biflow
 *   export: millisecond times, total counters and their reverse twins under
 *   enterprise 29305, CERT (PEN 6871) elements with the 0x4000 reverse bit,
 *   reverse ToS/flags/VLAN/sequence number), one IPv4 and one IPv6 template;
 * - Cisco ASA NSEL over NetFlow v9 (flow id, 5-tuple with 2-byte interfaces,
 *   ICMP type/code, post-NAT addresses and ports, firewallEvent 233, extended
 *   event 33002, event time 323, flow start 152, initiator/responder octets
 *   231/232 and packets 298/299, ACL ids 33000/33001, user name 40000), once
 *   with and once without the packet counts (older ASA releases).
 * The records are listed as data, so tests can sum their reverse counters.
 */
import { ipv4, ipfixMessage, ipfixTemplateRecord, set, uint, v9Packet, v9Templates, type Spec } from './wire.js';

/** Private enterprise numbers: RFC 5103 reverse elements, and CERT's (YAF). */
const REV = 29305;
const CERT = 6871;
/** RFC 5103 §6.2: the reverse of an enterprise-specific element sets bit 14 of its number. */
const CERT_REV = 0x4000;

/** Export time of the YAF messages (s since epoch). */
export const YAF_EXPORT_S = 1_700_000_400;

/** One YAF biflow record, as the fields say. */
export interface YafRecord {
  startMs: number;
  endMs: number;
  bytes: number;
  revBytes: number;
  packets: number;
  revPackets: number;
  src: string;
  dst: string;
  sport: number;
  dport: number;
  proto: number;
  flags: number;
  revFlags: number;
  tos: number;
  revTos: number;
}

const YAF_V4: Spec[] = [
  [152, 8], // flowStartMilliseconds
  [153, 8], // flowEndMilliseconds
  [85, 8], // octetTotalCount
  [85, 8, REV], // reverseOctetTotalCount
  [86, 8], // packetTotalCount
  [86, 8, REV], // reversePacketTotalCount
  [8, 4], // sourceIPv4Address
  [12, 4], // destinationIPv4Address
  [7, 2], // sourceTransportPort
  [11, 2], // destinationTransportPort
  [40, 2, CERT], // flowAttributes
  [40 | CERT_REV, 2, CERT], // reverseFlowAttributes
  [4, 1], // protocolIdentifier
  [136, 1], // flowEndReason
  [33, 2, CERT], // silkAppLabel
  [21, 4, CERT], // reverseFlowDeltaMilliseconds
  [184, 4], // tcpSequenceNumber
  [184, 4, REV], // reverseTcpSequenceNumber
  [14, 1, CERT], // initialTCPFlags
  [15, 1, CERT], // unionTCPFlags
  [14 | CERT_REV, 1, CERT], // reverseInitialTCPFlags
  [15 | CERT_REV, 1, CERT], // reverseUnionTCPFlags
  [6, 1], // tcpControlBits
  [6, 1, REV], // reverseTcpControlBits
  [58, 2], // vlanId
  [58, 2, REV], // reverseVlanId
  [5, 1], // ipClassOfService
  [5, 1, REV], // reverseIpClassOfService
];

/** The IPv6 template counts deltas (reverseOctetDeltaCount, 29305/1) and has no flags. */
const YAF_V6: Spec[] = [
  [152, 8],
  [153, 8],
  [1, 8], // octetDeltaCount
  [1, 8, REV], // reverseOctetDeltaCount
  [2, 8], // packetDeltaCount
  [2, 8, REV], // reversePacketDeltaCount
  [27, 16], // sourceIPv6Address
  [28, 16], // destinationIPv6Address
  [7, 2],
  [11, 2],
  [4, 1],
  [136, 1],
  [5, 1],
  [5, 1, REV],
];

/** IPv4 biflows: a TCP conversation, a uniflow (no answer), an ICMP echo and its reply. */
export const YAF_V4_RECORDS: readonly YafRecord[] = [
  {
    startMs: 1_700_000_300_000,
    endMs: 1_700_000_310_500,
    bytes: 1_200,
    revBytes: 48_000,
    packets: 10,
    revPackets: 40,
    src: '10.0.0.1',
    dst: '198.51.100.7',
    sport: 51_000,
    dport: 443,
    proto: 6,
    flags: 0x1b,
    revFlags: 0x12 | 0x08 | 0x01,
    tos: 0,
    revTos: 0x20,
  },
  {
    startMs: 1_700_000_301_000,
    endMs: 1_700_000_301_000,
    bytes: 90,
    revBytes: 0,
    packets: 1,
    revPackets: 0,
    src: '10.0.0.1',
    dst: '224.0.0.251',
    sport: 5353,
    dport: 5353,
    proto: 17,
    flags: 0,
    revFlags: 0,
    tos: 0,
    revTos: 0,
  },
  {
    startMs: 1_700_000_302_000,
    endMs: 1_700_000_303_000,
    bytes: 168,
    revBytes: 168,
    packets: 2,
    revPackets: 2,
    src: '10.0.0.2',
    dst: '192.0.2.53',
    sport: 0,
    dport: 0x0800,
    proto: 1,
    flags: 0,
    revFlags: 0,
    tos: 0xb8,
    revTos: 0x00,
  },
];

/** An IPv6 DNS exchange. */
export const YAF_V6_RECORDS: readonly (YafRecord & { src: string; dst: string })[] = [
  {
    startMs: 1_700_000_305_000,
    endMs: 1_700_000_305_040,
    bytes: 81,
    revBytes: 210,
    packets: 1,
    revPackets: 1,
    src: '2001:db8::10',
    dst: '2001:db8:53::1',
    sport: 40_000,
    dport: 53,
    proto: 17,
    flags: 0,
    revFlags: 0,
    tos: 0,
    revTos: 0x28,
  },
];

function ipv6(text: string): Buffer {
  const [head, tail] = text.split('::');
  const words = (s: string | undefined): number[] => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const h = words(head);
  const t = words(tail);
  const all = [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
  return Buffer.concat(all.map((w) => uint(w, 2)));
}

/** Times and counters, both directions: the first fields of both YAF templates. */
function yafCounters(r: YafRecord): Buffer {
  return Buffer.concat([
    uint(r.startMs, 8),
    uint(r.endMs, 8),
    uint(r.bytes, 8),
    uint(r.revBytes, 8),
    uint(r.packets, 8),
    uint(r.revPackets, 8),
  ]);
}

function yafV4Record(r: YafRecord): Buffer {
  return Buffer.concat([
    yafCounters(r),
    ipv4(r.src),
    ipv4(r.dst),
    uint(r.sport, 2),
    uint(r.dport, 2),
    uint(r.revBytes > 0 ? 0 : 1, 2), // flowAttributes: uniform packet size bit on the uniflow
    uint(0, 2),
    uint(r.proto, 1),
    uint(3, 1), // flowEndReason: end of flow detected
    uint(r.proto === 6 ? 443 : 0, 2), // silkAppLabel
    uint(r.revPackets > 0 ? 12 : 0, 4), // reverseFlowDeltaMilliseconds
    uint(r.proto === 6 ? 0x1234_5678 : 0, 4),
    uint(r.proto === 6 ? 0x9abc_def0 : 0, 4),
    uint(r.proto === 6 ? 0x02 : 0, 1), // initialTCPFlags (SYN)
    uint(r.flags, 1), // unionTCPFlags
    uint(r.proto === 6 ? 0x12 : 0, 1),
    uint(r.revFlags, 1),
    uint(r.flags, 1),
    uint(r.revFlags, 1),
    uint(100, 2),
    uint(r.revPackets > 0 ? 100 : 0, 2),
    uint(r.tos, 1),
    uint(r.revTos, 1),
  ]);
}

function yafV6Record(r: YafRecord): Buffer {
  return Buffer.concat([
    yafCounters(r),
    ipv6(r.src),
    ipv6(r.dst),
    uint(r.sport, 2),
    uint(r.dport, 2),
    uint(r.proto, 1),
    uint(3, 1),
    uint(r.tos, 1),
    uint(r.revTos, 1),
  ]);
}

/** The YAF messages: templates, then the IPv4 and IPv6 data sets (observation domain 0). */
export function yafBiflowMessages(): Buffer[] {
  const templates = set(2, Buffer.concat([ipfixTemplateRecord(0xb004, YAF_V4), ipfixTemplateRecord(0xb014, YAF_V6)]));
  return [
    ipfixMessage({ exportSecs: YAF_EXPORT_S, sequence: 0 }, templates),
    ipfixMessage(
      { exportSecs: YAF_EXPORT_S, sequence: 0 },
      set(0xb004, Buffer.concat(YAF_V4_RECORDS.map(yafV4Record))),
      set(0xb014, Buffer.concat(YAF_V6_RECORDS.map(yafV6Record))),
    ),
  ];
}

/** Header clock of the ASA datagrams. */
export const ASA_UNIX_S = 1_700_000_500;
export const ASA_UPTIME_MS = 86_400_000;

/** One NSEL record, as the fields say. */
export interface AsaRecord {
  flowId: number;
  src: string;
  sport: number;
  inIf: number;
  dst: string;
  dport: number;
  outIf: number;
  proto: number;
  icmpType: number;
  icmpCode: number;
  /** 1 created, 2 deleted (teardown), 3 denied, 5 update. */
  event: number;
  startMs: number;
  initiatorOctets: number;
  responderOctets: number;
  initiatorPackets: number;
  responderPackets: number;
}

const ASA_FIELDS_HEAD: Spec[] = [
  [148, 4], // flowId
  [8, 4], // sourceIPv4Address
  [7, 2], // sourceTransportPort
  [10, 2], // ingressInterface
  [12, 4], // destinationIPv4Address
  [11, 2], // destinationTransportPort
  [14, 2], // egressInterface
  [4, 1], // protocolIdentifier
  [176, 1], // icmpTypeIPv4
  [177, 1], // icmpCodeIPv4
  [225, 4], // postNATSourceIPv4Address
  [226, 4], // postNATDestinationIPv4Address
  [227, 2], // postNAPTSourceTransportPort
  [228, 2], // postNAPTDestinationTransportPort
  [233, 1], // firewallEvent (NF_F_FW_EVENT)
  [33002, 2], // extended firewall event
  [323, 8], // observationTimeMilliseconds (event time)
  [152, 8], // flowStartMilliseconds
  [231, 4], // initiatorOctets
  [232, 4], // responderOctets
];
const ASA_FIELDS_TAIL: Spec[] = [
  [33000, 12], // ingress ACL id
  [33001, 12], // egress ACL id
  [40000, 20], // user name
];
/** ASA 9.x: with initiatorPackets/responderPackets. */
export const ASA_FIELDS: Spec[] = [...ASA_FIELDS_HEAD, [298, 4], [299, 4], ...ASA_FIELDS_TAIL];
/** Older ASA releases: octets only. */
export const ASA_FIELDS_NO_PACKETS: Spec[] = [...ASA_FIELDS_HEAD, ...ASA_FIELDS_TAIL];

/** Teardown, update, create and ICMP records of template 263 (with packets). */
export const ASA_RECORDS: readonly AsaRecord[] = [
  {
    flowId: 1001,
    src: '192.168.1.20',
    sport: 50_123,
    inIf: 3,
    dst: '203.0.113.80',
    dport: 443,
    outIf: 4,
    proto: 6,
    icmpType: 0,
    icmpCode: 0,
    event: 2,
    startMs: 1_700_000_400_000,
    initiatorOctets: 3_000,
    responderOctets: 150_000,
    initiatorPackets: 20,
    responderPackets: 110,
  },
  {
    flowId: 1002,
    src: '192.168.1.21',
    sport: 53_000,
    inIf: 3,
    dst: '198.51.100.53',
    dport: 53,
    outIf: 4,
    proto: 17,
    icmpType: 0,
    icmpCode: 0,
    event: 5,
    startMs: 1_700_000_450_000,
    initiatorOctets: 400,
    responderOctets: 1_200,
    initiatorPackets: 4,
    responderPackets: 4,
  },
  {
    flowId: 1003,
    src: '192.168.1.22',
    sport: 50_200,
    inIf: 3,
    dst: '203.0.113.81',
    dport: 80,
    outIf: 4,
    proto: 6,
    icmpType: 0,
    icmpCode: 0,
    event: 1,
    startMs: 1_700_000_499_000,
    initiatorOctets: 0,
    responderOctets: 0,
    initiatorPackets: 0,
    responderPackets: 0,
  },
  {
    flowId: 1004,
    src: '192.168.1.23',
    sport: 0,
    inIf: 3,
    dst: '203.0.113.1',
    dport: 0,
    outIf: 4,
    proto: 1,
    icmpType: 8,
    icmpCode: 0,
    event: 2,
    startMs: 1_700_000_480_000,
    initiatorOctets: 84,
    responderOctets: 84,
    initiatorPackets: 1,
    responderPackets: 1,
  },
];

/** A teardown of template 264 (no packet counts). */
export const ASA_RECORDS_NO_PACKETS: readonly AsaRecord[] = [
  {
    flowId: 2001,
    src: '192.168.1.30',
    sport: 51_000,
    inIf: 5,
    dst: '203.0.113.90',
    dport: 993,
    outIf: 6,
    proto: 6,
    icmpType: 0,
    icmpCode: 0,
    event: 2,
    startMs: 1_700_000_420_000,
    initiatorOctets: 2_500,
    responderOctets: 64_000,
    initiatorPackets: 0,
    responderPackets: 0,
  },
];

function asaRecord(r: AsaRecord, withPackets: boolean): Buffer {
  const acl = Buffer.alloc(12, 0x11);
  const user = Buffer.alloc(20);
  user.write('alice');
  return Buffer.concat([
    uint(r.flowId, 4),
    ipv4(r.src),
    uint(r.sport, 2),
    uint(r.inIf, 2),
    ipv4(r.dst),
    uint(r.dport, 2),
    uint(r.outIf, 2),
    uint(r.proto, 1),
    uint(r.icmpType, 1),
    uint(r.icmpCode, 1),
    ipv4('198.51.100.200'), // post-NAT source (the firewall's outside address)
    ipv4(r.dst),
    uint(r.sport === 0 ? 0 : r.sport + 10_000, 2),
    uint(r.dport, 2),
    uint(r.event, 1),
    uint(r.event === 2 ? 2_030 : 0, 2),
    uint(ASA_UNIX_S * 1000 - 100, 8),
    uint(r.startMs, 8),
    uint(r.initiatorOctets, 4),
    uint(r.responderOctets, 4),
    ...(withPackets ? [uint(r.initiatorPackets, 4), uint(r.responderPackets, 4)] : []),
    acl,
    acl,
    user,
  ]);
}

/** The ASA datagrams: templates 263 and 264, then their data flowsets. */
export function asaNselPackets(): Buffer[] {
  const h = { uptimeMs: ASA_UPTIME_MS, unixSecs: ASA_UNIX_S, sourceId: 0 };
  return [
    v9Packet(
      { ...h, sequence: 0, count: 2 },
      v9Templates({ id: 263, fields: ASA_FIELDS }, { id: 264, fields: ASA_FIELDS_NO_PACKETS }),
    ),
    v9Packet(
      { ...h, sequence: 1, count: ASA_RECORDS.length + ASA_RECORDS_NO_PACKETS.length },
      set(263, Buffer.concat(ASA_RECORDS.map((r) => asaRecord(r, true)))),
      set(264, Buffer.concat(ASA_RECORDS_NO_PACKETS.map((r) => asaRecord(r, false)))),
    ),
  ];
}
