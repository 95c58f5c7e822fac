/**
 * The information elements the decoders understand, from the IANA IPFIX
 * registry (RFC 7012 and its updates). NetFlow v9 field types 1–127 share the
 * same numbers and meanings (RFC 3954 §8), so one table serves both.
 *
 * Only IANA elements (enterprise 0) are interpreted; everything else is
 * skipped by the length its template gives.
 */

/** Abstract data types (RFC 7012 §3.1) the decoders care about. */
export type IeType =
  | 'unsigned'
  | 'ipv4'
  | 'ipv6'
  | 'mac'
  | 'string'
  | 'octets'
  | 'dateTimeSeconds'
  | 'dateTimeMilliseconds'
  | 'dateTimeMicroseconds'
  | 'dateTimeNanoseconds';

/** One registry entry: id, IANA name, abstract type. */
export interface IeInfo {
  readonly id: number;
  readonly name: string;
  readonly type: IeType;
}

/** Element ids used by name in the decoders. */
export const IE = {
  octetDeltaCount: 1,
  packetDeltaCount: 2,
  protocolIdentifier: 4,
  ipClassOfService: 5,
  tcpControlBits: 6,
  sourceTransportPort: 7,
  sourceIPv4Address: 8,
  ingressInterface: 10,
  destinationTransportPort: 11,
  destinationIPv4Address: 12,
  egressInterface: 14,
  ipNextHopIPv4Address: 15,
  bgpSourceAsNumber: 16,
  bgpDestinationAsNumber: 17,
  bgpNextHopIPv4Address: 18,
  flowEndSysUpTime: 21,
  flowStartSysUpTime: 22,
  postOctetDeltaCount: 23,
  postPacketDeltaCount: 24,
  sourceIPv6Address: 27,
  destinationIPv6Address: 28,
  icmpTypeCodeIPv4: 32,
  samplingInterval: 34,
  samplingAlgorithm: 35,
  samplerId: 48,
  samplerMode: 49,
  samplerRandomInterval: 50,
  ipVersion: 60,
  ipNextHopIPv6Address: 62,
  bgpNextHopIPv6Address: 63,
  octetTotalCount: 85,
  packetTotalCount: 86,
  icmpTypeCodeIPv6: 139,
  flowStartSeconds: 150,
  flowEndSeconds: 151,
  flowStartMilliseconds: 152,
  flowEndMilliseconds: 153,
  flowStartMicroseconds: 154,
  flowEndMicroseconds: 155,
  flowStartNanoseconds: 156,
  flowEndNanoseconds: 157,
  flowStartDeltaMicroseconds: 158,
  flowEndDeltaMicroseconds: 159,
  systemInitTimeMilliseconds: 160,
  flowDurationMilliseconds: 161,
  flowDurationMicroseconds: 162,
  icmpTypeIPv4: 176,
  icmpCodeIPv4: 177,
  icmpTypeIPv6: 178,
  icmpCodeIPv6: 179,
  udpSourcePort: 180,
  udpDestinationPort: 181,
  tcpSourcePort: 182,
  tcpDestinationPort: 183,
  ipTotalLength: 224,
  initiatorOctets: 231,
  responderOctets: 232,
  ingressPhysicalInterface: 252,
  egressPhysicalInterface: 253,
  initiatorPackets: 298,
  responderPackets: 299,
  selectorId: 302,
  selectorAlgorithm: 304,
  samplingPacketInterval: 305,
  samplingPacketSpace: 306,
  samplingSize: 309,
  samplingPopulation: 310,
  dataLinkFrameSize: 312,
  ipHeaderPacketSection: 313,
  ipPayloadPacketSection: 314,
  dataLinkFrameSection: 315,
  mplsLabelStackSection: 316,
  sectionOffset: 409,
  sectionExportedOctets: 410,
} as const;

const ENTRIES: readonly [number, string, IeType][] = [
  [1, 'octetDeltaCount', 'unsigned'],
  [2, 'packetDeltaCount', 'unsigned'],
  [3, 'deltaFlowCount', 'unsigned'],
  [4, 'protocolIdentifier', 'unsigned'],
  [5, 'ipClassOfService', 'unsigned'],
  [6, 'tcpControlBits', 'unsigned'],
  [7, 'sourceTransportPort', 'unsigned'],
  [8, 'sourceIPv4Address', 'ipv4'],
  [9, 'sourceIPv4PrefixLength', 'unsigned'],
  [10, 'ingressInterface', 'unsigned'],
  [11, 'destinationTransportPort', 'unsigned'],
  [12, 'destinationIPv4Address', 'ipv4'],
  [13, 'destinationIPv4PrefixLength', 'unsigned'],
  [14, 'egressInterface', 'unsigned'],
  [15, 'ipNextHopIPv4Address', 'ipv4'],
  [16, 'bgpSourceAsNumber', 'unsigned'],
  [17, 'bgpDestinationAsNumber', 'unsigned'],
  [18, 'bgpNextHopIPv4Address', 'ipv4'],
  [19, 'postMCastPacketDeltaCount', 'unsigned'],
  [20, 'postMCastOctetDeltaCount', 'unsigned'],
  [21, 'flowEndSysUpTime', 'unsigned'],
  [22, 'flowStartSysUpTime', 'unsigned'],
  [23, 'postOctetDeltaCount', 'unsigned'],
  [24, 'postPacketDeltaCount', 'unsigned'],
  [25, 'minimumIpTotalLength', 'unsigned'],
  [26, 'maximumIpTotalLength', 'unsigned'],
  [27, 'sourceIPv6Address', 'ipv6'],
  [28, 'destinationIPv6Address', 'ipv6'],
  [29, 'sourceIPv6PrefixLength', 'unsigned'],
  [30, 'destinationIPv6PrefixLength', 'unsigned'],
  [31, 'flowLabelIPv6', 'unsigned'],
  [32, 'icmpTypeCodeIPv4', 'unsigned'],
  [33, 'igmpType', 'unsigned'],
  [34, 'samplingInterval', 'unsigned'],
  [35, 'samplingAlgorithm', 'unsigned'],
  [36, 'flowActiveTimeout', 'unsigned'],
  [37, 'flowIdleTimeout', 'unsigned'],
  [38, 'engineType', 'unsigned'],
  [39, 'engineId', 'unsigned'],
  [40, 'exportedOctetTotalCount', 'unsigned'],
  [41, 'exportedMessageTotalCount', 'unsigned'],
  [42, 'exportedFlowRecordTotalCount', 'unsigned'],
  [44, 'sourceIPv4Prefix', 'ipv4'],
  [45, 'destinationIPv4Prefix', 'ipv4'],
  [46, 'mplsTopLabelType', 'unsigned'],
  [47, 'mplsTopLabelIPv4Address', 'ipv4'],
  [48, 'samplerId', 'unsigned'],
  [49, 'samplerMode', 'unsigned'],
  [50, 'samplerRandomInterval', 'unsigned'],
  [51, 'classId', 'unsigned'],
  [52, 'minimumTTL', 'unsigned'],
  [53, 'maximumTTL', 'unsigned'],
  [54, 'fragmentIdentification', 'unsigned'],
  [55, 'postIpClassOfService', 'unsigned'],
  [56, 'sourceMacAddress', 'mac'],
  [57, 'postDestinationMacAddress', 'mac'],
  [58, 'vlanId', 'unsigned'],
  [59, 'postVlanId', 'unsigned'],
  [60, 'ipVersion', 'unsigned'],
  [61, 'flowDirection', 'unsigned'],
  [62, 'ipNextHopIPv6Address', 'ipv6'],
  [63, 'bgpNextHopIPv6Address', 'ipv6'],
  [64, 'ipv6ExtensionHeaders', 'unsigned'],
  [70, 'mplsTopLabelStackSection', 'octets'],
  [80, 'destinationMacAddress', 'mac'],
  [81, 'postSourceMacAddress', 'mac'],
  [82, 'interfaceName', 'string'],
  [83, 'interfaceDescription', 'string'],
  [85, 'octetTotalCount', 'unsigned'],
  [86, 'packetTotalCount', 'unsigned'],
  [88, 'fragmentOffset', 'unsigned'],
  [89, 'forwardingStatus', 'unsigned'],
  [95, 'applicationId', 'octets'],
  [96, 'applicationName', 'string'],
  [136, 'flowEndReason', 'unsigned'],
  [139, 'icmpTypeCodeIPv6', 'unsigned'],
  [144, 'exportingProcessId', 'unsigned'],
  [148, 'flowId', 'unsigned'],
  [149, 'observationDomainId', 'unsigned'],
  [150, 'flowStartSeconds', 'dateTimeSeconds'],
  [151, 'flowEndSeconds', 'dateTimeSeconds'],
  [152, 'flowStartMilliseconds', 'dateTimeMilliseconds'],
  [153, 'flowEndMilliseconds', 'dateTimeMilliseconds'],
  [154, 'flowStartMicroseconds', 'dateTimeMicroseconds'],
  [155, 'flowEndMicroseconds', 'dateTimeMicroseconds'],
  [156, 'flowStartNanoseconds', 'dateTimeNanoseconds'],
  [157, 'flowEndNanoseconds', 'dateTimeNanoseconds'],
  [158, 'flowStartDeltaMicroseconds', 'unsigned'],
  [159, 'flowEndDeltaMicroseconds', 'unsigned'],
  [160, 'systemInitTimeMilliseconds', 'dateTimeMilliseconds'],
  [161, 'flowDurationMilliseconds', 'unsigned'],
  [162, 'flowDurationMicroseconds', 'unsigned'],
  [176, 'icmpTypeIPv4', 'unsigned'],
  [177, 'icmpCodeIPv4', 'unsigned'],
  [178, 'icmpTypeIPv6', 'unsigned'],
  [179, 'icmpCodeIPv6', 'unsigned'],
  [180, 'udpSourcePort', 'unsigned'],
  [181, 'udpDestinationPort', 'unsigned'],
  [182, 'tcpSourcePort', 'unsigned'],
  [183, 'tcpDestinationPort', 'unsigned'],
  [224, 'ipTotalLength', 'unsigned'],
  [225, 'postNATSourceIPv4Address', 'ipv4'],
  [226, 'postNATDestinationIPv4Address', 'ipv4'],
  [227, 'postNAPTSourceTransportPort', 'unsigned'],
  [228, 'postNAPTDestinationTransportPort', 'unsigned'],
  [231, 'initiatorOctets', 'unsigned'],
  [232, 'responderOctets', 'unsigned'],
  [233, 'firewallEvent', 'unsigned'],
  [234, 'ingressVRFID', 'unsigned'],
  [235, 'egressVRFID', 'unsigned'],
  [252, 'ingressPhysicalInterface', 'unsigned'],
  [253, 'egressPhysicalInterface', 'unsigned'],
  [298, 'initiatorPackets', 'unsigned'],
  [299, 'responderPackets', 'unsigned'],
  [302, 'selectorId', 'unsigned'],
  [304, 'selectorAlgorithm', 'unsigned'],
  [305, 'samplingPacketInterval', 'unsigned'],
  [306, 'samplingPacketSpace', 'unsigned'],
  [307, 'samplingTimeInterval', 'unsigned'],
  [308, 'samplingTimeSpace', 'unsigned'],
  [309, 'samplingSize', 'unsigned'],
  [310, 'samplingPopulation', 'unsigned'],
  [312, 'dataLinkFrameSize', 'unsigned'],
  [313, 'ipHeaderPacketSection', 'octets'],
  [314, 'ipPayloadPacketSection', 'octets'],
  [315, 'dataLinkFrameSection', 'octets'],
  [316, 'mplsLabelStackSection', 'octets'],
  [322, 'observationTimeSeconds', 'dateTimeSeconds'],
  [323, 'observationTimeMilliseconds', 'dateTimeMilliseconds'],
  [324, 'observationTimeMicroseconds', 'dateTimeMicroseconds'],
  [325, 'observationTimeNanoseconds', 'dateTimeNanoseconds'],
  [409, 'sectionOffset', 'unsigned'],
  [410, 'sectionExportedOctets', 'unsigned'],
];

/** IANA elements by id. */
export const IE_REGISTRY: ReadonlyMap<number, IeInfo> = new Map(
  ENTRIES.map(([id, name, type]) => [id, Object.freeze({ id, name, type })]),
);

/** A readable name for a field, for logs and status output. */
export function ieName(id: number, enterprise = 0): string {
  if (enterprise !== 0) return `${enterprise}.${id}`;
  return IE_REGISTRY.get(id)?.name ?? `ie${id}`;
}

/** Seconds between the NTP era (1900) and the Unix epoch (1970), for dateTimeMicro/Nanoseconds. */
export const NTP_UNIX_OFFSET_S = 2_208_988_800;

/** IPFIX variable-length marker in a field specifier (RFC 7011 §7). */
export const VARIABLE_LENGTH = 65535;
