/**
 * Which field of a template plays which part of a flow (source address,
 * counters, times, …), and where a tunnel template's header copies start.
 * Read once per template by the record compiler (record-decoder.ts).
 */
import { IE, VARIABLE_LENGTH } from './ie-registry.js';
import type { TemplateField } from './template-cache.js';

/** Length of the shortest record of a template (each variable field takes at least its 1-byte length). */
export function minRecordLength(fields: readonly TemplateField[]): number {
  let n = 0;
  for (const f of fields) n += f.length === VARIABLE_LENGTH ? 1 : f.length;
  return n;
}

// Roles a field can play; the first field of the template (in priority
// order) that may play a role gets it. Post-NAT and station addresses stand
// for the client only where the template has no pre-NAT address.
const ROLE_CANDIDATES: Record<string, readonly number[]> = {
  src4: [IE.sourceIPv4Address, IE.postNATSourceIPv4Address, IE.staIPv4Address],
  dst4: [IE.destinationIPv4Address, IE.postNATDestinationIPv4Address],
  src6: [IE.sourceIPv6Address, IE.postNATSourceIPv6Address],
  dst6: [IE.destinationIPv6Address, IE.postNATDestinationIPv6Address],
  nh4: [IE.ipNextHopIPv4Address, IE.bgpNextHopIPv4Address],
  nh6: [IE.ipNextHopIPv6Address, IE.bgpNextHopIPv6Address],
  bytes: [IE.octetDeltaCount, IE.octetTotalCount, IE.initiatorOctets, IE.postOctetDeltaCount],
  packets: [IE.packetDeltaCount, IE.packetTotalCount, IE.initiatorPackets, IE.postPacketDeltaCount],
  sport: [IE.sourceTransportPort, IE.udpSourcePort, IE.tcpSourcePort],
  dport: [IE.destinationTransportPort, IE.udpDestinationPort, IE.tcpDestinationPort],
  proto: [IE.protocolIdentifier],
  flags: [IE.tcpControlBits],
  tos: [IE.ipClassOfService],
  inIf: [IE.ingressInterface, IE.ingressPhysicalInterface],
  outIf: [IE.egressInterface, IE.egressPhysicalInterface],
  srcAs: [IE.bgpSourceAsNumber],
  dstAs: [IE.bgpDestinationAsNumber],
  ipv: [IE.ipVersion],
  icmp4: [IE.icmpTypeCodeIPv4],
  icmp6: [IE.icmpTypeCodeIPv6],
  icmpType: [IE.icmpTypeIPv4, IE.icmpTypeIPv6],
  icmpCode: [IE.icmpCodeIPv4, IE.icmpCodeIPv6],
  interval: [IE.samplingInterval, IE.samplerRandomInterval],
  sampler: [IE.samplerId, IE.selectorId],
  pktIv: [IE.samplingPacketInterval],
  pktSp: [IE.samplingPacketSpace],
  size: [IE.samplingSize],
  pop: [IE.samplingPopulation],
  prob: [IE.samplingProbability],
  timeIv: [IE.samplingTimeInterval],
  timeSp: [IE.samplingTimeSpace],
  init: [IE.systemInitTimeMilliseconds],
  startS: [IE.flowStartSeconds],
  endS: [IE.flowEndSeconds],
  startMs: [IE.flowStartMilliseconds],
  endMs: [IE.flowEndMilliseconds],
  startUs: [IE.flowStartMicroseconds],
  endUs: [IE.flowEndMicroseconds],
  startNs: [IE.flowStartNanoseconds],
  endNs: [IE.flowEndNanoseconds],
  startUp: [IE.flowStartSysUpTime],
  endUp: [IE.flowEndSysUpTime],
  startDelta: [IE.flowStartDeltaMicroseconds],
  endDelta: [IE.flowEndDeltaMicroseconds],
  durMs: [IE.flowDurationMilliseconds],
  durUs: [IE.flowDurationMicroseconds],
};

/** Roles that make up a flow's key: all of them come from one copy of the packet's headers. */
export const KEY_ROLES = [
  'src4',
  'dst4',
  'src6',
  'dst6',
  'proto',
  'sport',
  'dport',
  'flags',
  'tos',
  'ipv',
  'icmp4',
  'icmp6',
  'icmpType',
  'icmpCode',
];
const KEY_IDS = new Set(KEY_ROLES.flatMap((r) => ROLE_CANDIDATES[r]!));
export const ADDRESS_KEYS = ['src4', 'dst4', 'src6', 'dst6'];
const ADDRESS4_IDS = new Set([...ROLE_CANDIDATES.src4!, ...ROLE_CANDIDATES.dst4!]);
const ADDRESS6_IDS = new Set([...ROLE_CANDIDATES.src6!, ...ROLE_CANDIDATES.dst6!]);
export const OTHER_ROLES = Object.keys(ROLE_CANDIDATES).filter((r) => !KEY_ROLES.includes(r));

const ADDRESS_ROLES: Record<string, number> = { src4: 4, dst4: 4, nh4: 4, src6: 16, dst6: 16, nh6: 16 };
const NTP_ROLES = new Set(['startUs', 'endUs', 'startNs', 'endNs']);

/** Picks, for each of `names`, the field in [from, to) that plays it; returns role → field index. */
export function assignRoles(
  fields: readonly TemplateField[],
  names: readonly string[],
  from = 0,
  to = fields.length,
): Map<string, number> {
  const roles = new Map<string, number>();
  for (const role of names) {
    for (const id of ROLE_CANDIDATES[role]!) {
      let idx = -1;
      for (let i = from; i < to && idx < 0; i++) {
        const f = fields[i]!;
        if (f.enterprise === 0 && f.id === id && fits(role, f.length)) idx = i;
      }
      if (idx >= 0) {
        roles.set(role, idx);
        break;
      }
    }
  }
  return roles;
}

function fits(role: string, length: number): boolean {
  const addr = ADDRESS_ROLES[role];
  if (addr !== undefined) return length === addr;
  if (NTP_ROLES.has(role) || role === 'init') return length === 8;
  if (role === 'prob') return length === 4 || length === 8;
  return length >= 1 && length <= 8;
}

/**
 * Where each copy of the packet's headers starts in a template (field indices, ascending).
 * Tunnel templates (IOS-XR SRv6/MPLS, Huawei NetStream) list the outer header's elements,
 * then the inner header's. Only a template that repeats a key element has several copies (a
 * mixed IPv4/IPv6 template names each family's addresses once and is one header); in one
 * that does, a copy ends where a key element comes again, or where an address of the other
 * family follows the current copy's addresses and some of its other key fields (an IPv6
 * header with its next header 4, then the IPv4 header it carries).
 */
export function headerCopies(fields: readonly TemplateField[]): number[] {
  const keyIds = fields.filter((f) => f.enterprise === 0 && KEY_IDS.has(f.id)).map((f) => f.id);
  if (new Set(keyIds).size === keyIds.length) return [0];
  const starts = [0];
  let seen = new Set<number>();
  let family = 0;
  let closed = false;
  fields.forEach((f, i) => {
    if (f.enterprise !== 0 || !KEY_IDS.has(f.id)) return;
    const a = ADDRESS4_IDS.has(f.id) ? 4 : ADDRESS6_IDS.has(f.id) ? 6 : 0;
    if (seen.has(f.id) || (a !== 0 && family !== 0 && a !== family && closed)) {
      starts.push(i);
      seen = new Set();
      family = 0;
      closed = false;
    }
    seen.add(f.id);
    if (a !== 0) family ||= a;
    else if (family !== 0) closed = true;
  });
  return starts;
}
