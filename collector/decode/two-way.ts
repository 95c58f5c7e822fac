/**
 * Two-way records: one data record that counts both directions of a
 * conversation. RFC 5103 biflows carry the return traffic in "reverse"
 * information elements (the IANA element's number under enterprise 29305);
 * Cisco ASA NSEL carries it in responderOctets (232) and responderPackets
 * (299), beside initiatorOctets/initiatorPackets (231/298) for the forward
 * direction. Left alone, the return bytes would be missing from every total
 * (a firewall's downloads would be invisible), so the compiled template
 * decoder writes them as a flow row of their own, right after the record's
 * forward row: addresses, ports, interfaces and AS numbers swapped, same
 * times and sampling interval, the reverse counters, flags and ToS.
 *
 * Only the source of that extra row lives here; `record-decoder.ts` emits it
 * for templates that carry a reverse counter, so other templates pay nothing.
 */
import { IE } from './ie-registry.js';
import type { TemplateField } from './template-cache.js';

/** Private enterprise number of RFC 5103's reverse information elements (§6.1). */
export const REVERSE_PEN = 29305;

interface Candidate {
  readonly pen: number;
  readonly id: number;
}

const rev = (id: number): Candidate => ({ pen: REVERSE_PEN, id });
const iana = (id: number): Candidate => ({ pen: 0, id });

/** Roles of the reverse row; the first candidate the template has wins. */
const REVERSE_ROLES: Record<string, readonly Candidate[]> = {
  rBytes: [rev(IE.octetDeltaCount), rev(IE.octetTotalCount), iana(IE.responderOctets), rev(IE.postOctetDeltaCount)],
  rPackets: [rev(IE.packetDeltaCount), rev(IE.packetTotalCount), iana(IE.responderPackets), rev(IE.postPacketDeltaCount)],
  rFlags: [rev(IE.tcpControlBits)],
  rTos: [rev(IE.ipClassOfService)],
};

/**
 * The fields of a template that feed a reverse row, as role → field index (roles named
 * `rBytes`, `rPackets`, `rFlags`, `rTos`); empty when the template carries no reverse
 * counter, i.e. when it is not a two-way template.
 */
export function assignReverseRoles(fields: readonly TemplateField[]): Map<string, number> {
  const roles = new Map<string, number>();
  for (const [role, candidates] of Object.entries(REVERSE_ROLES)) {
    for (const c of candidates) {
      const idx = fields.findIndex((f) => f.enterprise === c.pen && f.id === c.id && f.length >= 1 && f.length <= 8);
      if (idx >= 0) {
        roles.set(role, idx);
        break;
      }
    }
  }
  if (!roles.has('rBytes') && !roles.has('rPackets')) roles.clear();
  return roles;
}

/** What the reverse row's code needs from the template compiler. */
export interface ReverseRowCodegen {
  has(role: string): boolean;
  /** Expression reading a role's unsigned value. */
  val(role: string): string;
  /** Statement storing a role's counter, scaled by `iv`, in row `r` of a count column and its rest column. */
  count(role: string, col: string, restCol: string): string;
  /** Statements storing the unspecified address of the row's family (`ver`) in address column `col` of row `r`. */
  unspecified(col: string): string[];
  /** Whether address columns are written as 32-bit words (4 a row) rather than bytes. */
  words: boolean;
}

/**
 * Source of the statements, placed after the forward row of a record has been written
 * (at row `r - 1`), that add the reverse row at `r` when the record counts any return
 * traffic (a record with zero reverse bytes and packets gets none). The row is a copy of
 * the forward row with:
 * - source and destination addresses, ports, interfaces and AS numbers swapped: the return
 *   packets enter where the forward ones left;
 * - the next hop unspecified: the record's next hop leads towards the forward destination;
 * - for ICMP, both ports 0: the forward type/code does not describe the replies;
 * - the reverse counters, TCP flags and ToS (0 when the template has none).
 * Increments `rev`, the count of reverse rows, for the caller.
 */
export function reverseRowSource(g: ReverseRowCodegen): string[] {
  const nonZero = [g.has('rBytes') ? `${g.val('rBytes')} !== 0` : '', g.has('rPackets') ? `${g.val('rPackets')} !== 0` : '']
    .filter(Boolean)
    .join(' || ');
  const swapAddresses = g.words
    ? [
        `const f4 = q * 4, o4 = r * 4;`,
        `aS32[o4] = aD32[f4]; aS32[o4+1] = aD32[f4+1]; aS32[o4+2] = aD32[f4+2]; aS32[o4+3] = aD32[f4+3];`,
        `aD32[o4] = aS32[f4]; aD32[o4+1] = aS32[f4+1]; aD32[o4+2] = aS32[f4+2]; aD32[o4+3] = aS32[f4+3];`,
        `aE32[o4] = e0; aE32[o4+1] = e1; aE32[o4+2] = e2; aE32[o4+3] = e3;`,
      ]
    : [
        `const f = q * 16, o = r * 16;`,
        `for (let k = 0; k < 16; k++) { aS[o+k] = aD[f+k]; aD[o+k] = aS[f+k]; aE[o+k] = ex[k]; }`,
      ];
  return [
    `    if (${nonZero}) {`,
    `      const q = r - 1;`,
    ...swapAddresses.map((s) => `      ${s}`),
    ...g.unspecified('aN').map((s) => `      ${s}`),
    `      cRecv[r] = recv; cStart[r] = ts; cEnd[r] = te;`,
    `      ${g.has('rBytes') ? g.count('rBytes', 'cBytes', 'cBR') : 'cBytes[r] = 0; cBR[r] = 0;'}`,
    `      ${g.has('rPackets') ? g.count('rPackets', 'cPk', 'cPR') : 'cPk[r] = 0; cPR[r] = 0;'}`,
    `      if (proto === 1 || proto === 58) { cSp[r] = 0; cDp[r] = 0; } else { cSp[r] = cDp[q]; cDp[r] = cSp[q]; }`,
    `      cPr[r] = proto; cFl[r] = ${g.has('rFlags') ? g.val('rFlags') : '0'}; cTos[r] = ${g.has('rTos') ? g.val('rTos') : '0'};`,
    `      cVer[r] = ver; cIv[r] = iv;`,
    `      cIn[r] = cOut[q]; cOut[r] = cIn[q]; cSas[r] = cDas[q]; cDas[r] = cSas[q];`,
    `      r++; rev++;`,
    `    }`,
  ];
}
