/**
 * Per-template record decoders for NetFlow v9 and IPFIX.
 *
 * A template is a fixed list of (element id, length). Instead of looping over
 * that list for every record, the list is turned once into straight-line
 * JavaScript that reads each field it needs at a constant offset and writes
 * one row of every FlowBatch column; V8 then compiles that function like
 * hand-written code. Only integers taken from the template (offsets,
 * lengths, element ids) reach the generated source, never bytes of a data
 * record, and every read is bounded by checks emitted before it.
 *
 * Options data records (sampling, system init time) are rare and go through
 * a plain interpreter (options-records.ts); which field plays which role is
 * template-roles.ts.
 *
 * Over 500 lines on purpose: `compileTemplate` is one generator that emits
 * one function's source, and its parts (bounds checks, field reads, the row
 * writes) only make sense beside each other.
 */
import { LITTLE_ENDIAN, MAPPED_WORD, scaleCount, type FlowBatch } from '../../common/flow-batch.js';
import { NTP_UNIX_OFFSET_S, VARIABLE_LENGTH } from './ie-registry.js';
import { newPacketHeaders, readDataLinkFrame, readIpPacket } from './packet-section.js';
import { selectorInterval } from './sampling.js';
import { sectionLayout } from './section-fields.js';
import type { Template, TemplateField } from './template-cache.js';
import { ADDRESS_KEYS, assignRoles, headerCopies, KEY_ROLES, minRecordLength, OTHER_ROLES } from './template-roles.js';
import { assignReverseRoles, reverseRowSource } from './two-way.js';

/** Per-set inputs of a compiled decoder: header facts and domain state. */
export interface RecordContext {
  /** Exporter address, 16 bytes (IPv4-mapped for IPv4). */
  exporter: Uint8Array;
  receivedMs: number;
  /** Export time of the header, ms since epoch. */
  exportMs: number;
  /** v9 header sysUptime in ms (flowStart/EndSysUpTime are relative to it). */
  sysUptimeMs: number;
  /** IPFIX systemInitTimeMilliseconds of the domain (NaN = not announced yet). */
  sysInitMs: number;
  /** Interval for records that name none (domain default, else 1). */
  interval: number;
  /** Configured override for this exporter (0 = none); beats everything. */
  override: number;
  /** Sampler id → interval of the domain. */
  samplers: Map<number, number>;
  /** A record's own sampling interval above this is refused (not applied). */
  maxInterval: number;
  /** Set by the decoder, for the caller to count: intervals it refused in this set. */
  refused: number;
  /** Set by the decoder: rows it added for the return direction of two-way records (see two-way.ts). */
  reverseRows: number;
  /** Set by the decoder: records dropped because their packet section held no readable IP header. */
  sectionsUnreadable: number;
}

/** Appends the records of one data set; returns records read, or -1 when the set is malformed. */
export type SetDecoder = (b: Buffer, p: number, end: number, out: FlowBatch, x: RecordContext) => number;

/** A data template turned into code. */
export interface CompiledTemplate {
  readonly decode: SetDecoder;
  /** Shortest record the template allows (0: the template has no bytes at all). */
  readonly minLength: number;
  /**
   * What becomes of its records: 'flows' (rows with addresses: the template's, or those of its
   * packet section when it has none; a record whose section is unreadable is dropped and
   * counted in the decoder's `sectionsUnreadable`), 'addressless' (rows with the
   * unspecified address: no address element, but counters), 'none' (neither: not a flow,
   * skipped and counted).
   */
  readonly kind: 'flows' | 'addressless' | 'none';
  /** Its records name their sampler (samplerId or selectorId). */
  readonly namesSampler: boolean;
}

/** Which time base flowStart/EndSysUpTime use: v9 header uptime or IPFIX systemInitTimeMilliseconds. */
export type UptimeBase = 'header' | 'systemInit';

/** Returns the template's compiled decoder, building it on first use. */
export function compiledFor(t: Template, base: UptimeBase): CompiledTemplate {
  const c = t.compiled as CompiledTemplate | undefined;
  if (c !== undefined) return c;
  const built = compileTemplate(t.fields, base);
  t.compiled = built;
  return built;
}

/**
 * Source of an unsigned big-endian read of `len` (1..8) bytes at `pos` (a JS
 * expression) through `dv`, the set's DataView over `b`: V8 compiles a
 * DataView getter to one load (and a byte swap), where assembling bytes
 * costs a bounds-checked load per byte; the decode thread spent half its
 * record time on that.
 */
function readUint(pos: string, len: number): string {
  switch (len) {
    case 1:
      return `dv.getUint8(${pos})`;
    case 2:
      return `dv.getUint16(${pos})`;
    case 3:
      return `(dv.getUint16(${pos}) * 256 + dv.getUint8(${pos}+2))`;
    case 4:
      return `dv.getUint32(${pos})`;
    default: {
      const hi = len - 4;
      return `(${readUint(pos, hi)} * 4294967296 + dv.getUint32(${pos}+${hi}))`;
    }
  }
}

// Where scaleCount leaves the rest of a wide counter (decoders are synchronous, so one is enough).
const WIDE_REST = new Float64Array(1);
// What the packet section of the record being decoded said (same reason for one).
const SECTION = newPacketHeaders();

/** Reads of the fields of one role map: has / position / value source. */
interface RoleView {
  has(r: string): boolean;
  pos(r: string): string | undefined;
  len(r: string): number;
  val(r: string): string;
}

/** Builds the decoder of a data template. */
export function compileTemplate(fields: readonly TemplateField[], base: UptimeBase): CompiledTemplate {
  const minLength = minRecordLength(fields);
  if (minLength === 0) return { decode: () => 0, minLength, kind: 'none', namesSampler: false };
  const section = sectionLayout(fields);
  let sectionAt = '';
  let sectionLength = '';
  const body: string[] = [];
  const fieldPos: string[] = []; // field index → position expression
  let baseVar = 'p';
  let delta = 0;
  let varCount = 0;
  // Fixed bytes from index i up to the next variable field (or the end).
  const segmentLength = (i: number): number => {
    let n = 0;
    for (let k = i; k < fields.length && fields[k]!.length !== VARIABLE_LENGTH; k++) n += fields[k]!.length;
    return n;
  };
  fields.forEach((f, i) => {
    if (f.length === VARIABLE_LENGTH) {
      const v = `p${++varCount}`;
      body.push(
        `let q${varCount} = ${baseVar}+${delta}; if (q${varCount} >= end) return -1;`,
        `let l${varCount} = b[q${varCount}++];`,
        `if (l${varCount} === 255) { if (q${varCount} + 2 > end) return -1; l${varCount} = (b[q${varCount}] << 8) | b[q${varCount}+1]; q${varCount} += 2; }`,
        `const ${v} = q${varCount} + l${varCount};`,
        `if (${v} + ${segmentLength(i + 1)} > end) return -1;`,
      );
      if (section?.index === i) {
        sectionAt = `q${varCount}`;
        sectionLength = `l${varCount}`;
      }
      baseVar = v;
      delta = 0;
      fieldPos.push('');
      return;
    }
    fieldPos.push(`${baseVar}+${delta}`);
    if (section?.index === i) {
      sectionAt = `${baseVar}+${delta}`;
      sectionLength = String(f.length);
    }
    delta += f.length;
  });
  const recordEnd = `${baseVar}+${delta}`;
  const viewOf = (roles: Map<string, number>): RoleView => ({
    has: (r) => roles.has(r),
    pos: (r) => (roles.has(r) ? fieldPos[roles.get(r)!] : undefined),
    len: (r) => fields[roles.get(r)!]!.length,
    val: (r) => {
      const f = fields[roles.get(r)!]!;
      const p = fieldPos[roles.get(r)!]!;
      if (r === 'prob') return f.length === 8 ? `dv.getFloat64(${p})` : `dv.getFloat32(${p})`;
      return readUint(p, f.length);
    },
  });

  // Key fields: one view per copy of the headers; the flow's key comes from the innermost
  // copy that carries an address (at run time: that has a non-zero one).
  const starts = headerCopies(fields);
  const copies = starts.map((from, k) => viewOf(assignRoles(fields, KEY_ROLES, from, starts[k + 1] ?? fields.length)));
  const withAddress = copies.filter((c) => ADDRESS_KEYS.some((r) => c.has(r)));
  const keyCopies = withAddress.length > 0 ? withAddress : [copies[copies.length - 1]!];
  // Other roles, with those of two-way records (two-way.ts) and packet sections (section-fields.ts).
  const other = assignRoles(fields, OTHER_ROLES);
  const reverseRoles = assignReverseRoles(fields);
  for (const [role, idx] of reverseRoles) other.set(role, idx);
  const twoWay = reverseRoles.size > 0;
  if (section) for (const [role, idx] of section.roles) other.set(role, idx);
  const g = viewOf(other);
  const has = g.has;
  const val = g.val;
  const num = (role: string, otherwise: string): string => (has(role) ? val(role) : otherwise);
  // A packet section gives the key only to a template whose own copies have no address: it is
  // then the one copy every key field comes from (a template with addresses is a flow template,
  // and mixing its fields with the packet's would make a flow that is neither).
  const keyFromSection = section !== undefined && withAddress.length === 0;
  // Reverse counters are counters too: an address-less two-way record is kept like any other.
  const counted = has('bytes') || has('packets') || twoWay;
  const kind = withAddress.length > 0 || keyFromSection ? 'flows' : counted ? 'addressless' : 'none';

  /** IP version of a copy: from which address fields it has (none: 4, or 6 when its ipVersion says so). */
  const versionOf = (c: RoleView): string => {
    const h4 = c.has('src4') || c.has('dst4');
    const h6 = c.has('src6') || c.has('dst6');
    if (h4 && !h6) return '4';
    if (h6 && !h4) return '6';
    if (h4 && h6) {
      const nz4 = [c.has('src4') ? `${c.val('src4')} !== 0` : '', c.has('dst4') ? `${c.val('dst4')} !== 0` : '']
        .filter(Boolean)
        .join(' || ');
      const guess = `((${nz4}) ? 4 : 6)`;
      return c.has('ipv') ? `((${c.val('ipv')} === 4 || ${c.val('ipv')} === 6) ? ${c.val('ipv')} : ${guess})` : guess;
    }
    // No address: the unspecified one, of the family the record names (IPv4 unless it says 6).
    return c.has('ipv') ? `(${c.val('ipv')} === 6 ? 6 : 4)` : '4';
  };

  // The section is read only where something comes from it: the key, or the bytes of a record
  // without an octet counter (one packet of its IP length, below).
  const readSection = section !== undefined && (keyFromSection || !has('bytes'));
  let sectionRead: string[] = [];
  if (section !== undefined && readSection) {
    // sectionExportedOctets says how much of a fixed-length section is packet, not padding;
    // a section that does not start at the packet's first byte (sectionOffset) is not read
    // (read as empty, which clears what the previous record left in S).
    let length = has('sectionExported') ? `Math.min(${sectionLength}, ${val('sectionExported')})` : sectionLength;
    if (has('sectionOffset')) length = `(${val('sectionOffset')} !== 0 ? 0 : ${length})`;
    sectionRead = [`    const sv = ${section.reader}(b, ${sectionAt}, ${sectionAt} + ${length}, S);`];
  }

  // Addresses are stored as four 32-bit words per row (`<col>32` views, o4 = row × 4) on
  // little-endian platforms: a quarter of the stores of byte-wise writing. A word holds the
  // wire bytes k..k+3 with byte k lowest, which is their order in memory.
  const word = (p: string, k: number): string => `dv.getInt32(${p}+${k}, true)`;
  const exWord = (k: number): string => `(ex[${k}] | (ex[${k + 1}] << 8) | (ex[${k + 2}] << 16) | (ex[${k + 3}] << 24))`;
  const write4 = (col: string, p: string | undefined): string[] => {
    if (LITTLE_ENDIAN)
      return [
        `${col}32[o4] = 0; ${col}32[o4+1] = 0; ${col}32[o4+2] = ${MAPPED_WORD}; ${col}32[o4+3] = ${p === undefined ? '0' : word(p, 0)};`,
      ];
    const out = [];
    for (let k = 0; k < 10; k++) out.push(`${col}[o+${k}] = 0;`);
    out.push(`${col}[o+10] = 255; ${col}[o+11] = 255;`);
    for (let k = 0; k < 4; k++) out.push(`${col}[o+${12 + k}] = ${p === undefined ? '0' : `b[${p}+${k}]`};`);
    return out;
  };
  const write16 = (col: string, p: string | undefined): string[] => {
    if (LITTLE_ENDIAN) {
      return p === undefined
        ? [`${col}32[o4] = 0; ${col}32[o4+1] = 0; ${col}32[o4+2] = 0; ${col}32[o4+3] = 0;`]
        : [
            `{ const s = ${p}; ${col}32[o4] = ${word('s', 0)}; ${col}32[o4+1] = ${word('s', 4)}; ${col}32[o4+2] = ${word('s', 8)}; ${col}32[o4+3] = ${word('s', 12)}; }`,
          ];
    }
    return p === undefined
      ? [`for (let k = 0; k < 16; k++) ${col}[o+k] = 0;`]
      : [`{ const s = ${p}; for (let k = 0; k < 16; k++) ${col}[o+k] = b[s+k]; }`];
  };
  /** Writes column `col` from roles r4/r6 of copy `c`, whose version is `ver` (literal or run-time `ver`). */
  const addr = (ver: string, col: string, c: RoleView, r4: string, r6: string, v = 'ver'): string[] => {
    if (ver === '4') return write4(col, c.pos(r4));
    if (ver === '6') return write16(col, c.pos(r6));
    return [`if (${v} === 4) {`, ...write4(col, c.pos(r4)), `} else {`, ...write16(col, c.pos(r6)), `}`];
  };
  /** Next hop: the template's own; else, inside a tunnel, the outer header's destination (the tunnel endpoint); else zero. */
  const nextHop = (ver: string, outer: RoleView | undefined): string[] => {
    if (has('nh4') && has('nh6'))
      return [`if (ver === 4) {`, ...write4('aN', g.pos('nh4')), `} else {`, ...write16('aN', g.pos('nh6')), `}`];
    if (has('nh4')) return write4('aN', g.pos('nh4'));
    if (has('nh6')) return write16('aN', g.pos('nh6'));
    if (outer !== undefined) {
      const d4 = outer.has('dst4') ? 'dst4' : 'src4';
      const d6 = outer.has('dst6') ? 'dst6' : 'src6';
      return [`{ const ov = ${versionOf(outer)};`, ...addr(versionOf(outer), 'aN', outer, d4, d6, 'ov'), `}`];
    }
    // No next hop: 0.0.0.0 for an IPv4 flow (as v5 gives it), :: for IPv6.
    return addr(ver, 'aN', g, 'nh4', 'nh6');
  };
  /** ICMP type/code (for the destination port, as nfdump keeps it) of copy `c`, or undefined. */
  const icmpOf = (c: RoleView): string | undefined => {
    if (c.has('icmp4') || c.has('icmp6')) {
      const v4 = c.has('icmp4') ? c.val('icmp4') : c.val('icmp6');
      const v6 = c.has('icmp6') ? c.val('icmp6') : c.val('icmp4');
      return `(proto === 58 ? ${v6} : ${v4})`;
    }
    if (c.has('icmpType')) return `((${c.val('icmpType')} << 8) | ${c.has('icmpCode') ? c.val('icmpCode') : '0'})`;
    return undefined;
  };
  /**
   * Statements writing the key columns of copy `c`. One copy (nearly every template): the
   * code the decoder has always emitted, `ver` declared before them and the ports, flags and
   * ToS read where they are stored. Several: assignments to variables declared before.
   */
  const keyBlock = (c: RoleView, outer: RoleView | undefined, single: boolean): string[] => {
    const ver = versionOf(c);
    const icmp = icmpOf(c);
    const cv = (r: string): string => (c.has(r) ? c.val(r) : '0');
    return [
      ...(single ? [] : [`    ver = ${ver};`]),
      ...addr(ver, 'aS', c, 'src4', 'src6'),
      ...addr(ver, 'aD', c, 'dst4', 'dst6'),
      ...nextHop(ver, outer),
      ...(single
        ? [
            LITTLE_ENDIAN
              ? `    aE32[o4] = e0; aE32[o4+1] = e1; aE32[o4+2] = e2; aE32[o4+3] = e3;`
              : `    for (let k = 0; k < 16; k++) aE[o+k] = ex[k];`,
          ]
        : []),
      `    ${single ? 'const ' : ''}proto = ${cv('proto')};`,
      `    ${single ? 'let ' : ''}dp = ${cv('dport')};`,
      icmp !== undefined ? `    if (proto === 1 || proto === 58) dp = ${icmp};` : '',
      single ? '' : `    sp = ${cv('sport')}; fl = ${cv('flags')}; tos = ${cv('tos')};`,
    ];
  };
  /** Any address of copy `c` is non-zero (run-time test). */
  const nonZero = (c: RoleView): string => {
    const parts: string[] = [];
    for (const r of ADDRESS_KEYS) {
      const p = c.pos(r);
      if (p === undefined) continue;
      const words = r.endsWith('4') ? 1 : 4;
      for (let k = 0; k < words; k++) parts.push(`dv.getUint32(${p}+${k * 4}) !== 0`);
    }
    return parts.join(' || ');
  };
  let keys: string[];
  let single: { ver: string; sp: string; fl: string; tos: string } | undefined;
  if (keyFromSection) {
    // Every key field from the packet's headers (S, filled by sectionRead; `sv` its IP version,
    // 0 when it held none, and then the record is dropped before this). Addresses come
    // IPv4-mapped, as the columns hold them; ICMP type/code is already in the port.
    const fromS = (col: string, from: string): string =>
      `    { const o = r * 16; for (let k = 0; k < 16; k++) ${col}[o+k] = S.${from}[k]; }`;
    keys = [
      fromS('aS', 'src'),
      fromS('aD', 'dst'),
      ...nextHop('sv', undefined),
      LITTLE_ENDIAN
        ? `    aE32[o4] = e0; aE32[o4+1] = e1; aE32[o4+2] = e2; aE32[o4+3] = e3;`
        : `    for (let k = 0; k < 16; k++) aE[o+k] = ex[k];`,
      `    const proto = S.proto;`,
      `    const dp = S.dstPort;`,
    ];
    single = { ver: 'sv', sp: 'S.srcPort', fl: 'S.tcpFlags', tos: 'S.tos' };
  } else if (keyCopies.length === 1) {
    const c = keyCopies[0]!;
    keys = keyBlock(c, undefined, true);
    const cv = (r: string): string => (c.has(r) ? c.val(r) : '0');
    single = { ver: versionOf(c), sp: cv('sport'), fl: cv('flags'), tos: cv('tos') };
  } else {
    keys = [`    let ver, proto, dp, sp, fl, tos;`];
    for (let k = keyCopies.length - 1; k >= 0; k--) {
      const cond = k === 0 ? '' : `if (${nonZero(keyCopies[k]!)}) `;
      keys.push(
        `    ${k === keyCopies.length - 1 ? '' : 'else '}${cond}{`,
        ...keyBlock(keyCopies[k]!, keyCopies[k - 1], false),
        `    }`,
      );
    }
    keys.push(
      LITTLE_ENDIAN
        ? `    aE32[o4] = e0; aE32[o4+1] = e1; aE32[o4+2] = e2; aE32[o4+3] = e3;`
        : `    for (let k = 0; k < 16; k++) aE[o+k] = ex[k];`,
    );
  }

  // Times, ms since epoch. Absolute forms first, then uptime-relative, then
  // export-relative deltas; a duration fills in a missing end.
  const ntp = (role: string): string => {
    const p = g.pos(role)!;
    return `((${readUint(p, 4)} - ${NTP_UNIX_OFFSET_S}) * 1000 + ${readUint(`${p}+4`, 4)} / 4294967.296)`;
  };
  // A record's own systemInitTimeMilliseconds beats the header's uptime and the domain's init
  // time; a zero one (not filled in) leaves them in force.
  const uptimeFrom = (role: string): string =>
    base === 'header' ? `(exportMs - ((up - ${val(role)}) | 0))` : `(init === init ? init + ${val(role)} : exportMs)`;
  const uptime = (role: string): string =>
    has('init') ? `(${val('init')} > 0 ? ${val('init')} + ${val(role)} : ${uptimeFrom(role)})` : uptimeFrom(role);
  const timeOf = (s: string, ms: string, us: string, ns: string, upr: string, d: string): string | undefined => {
    if (has(ms)) return val(ms);
    if (has(s)) return `(${val(s)} * 1000)`;
    if (has(us)) return ntp(us);
    if (has(ns)) return ntp(ns);
    if (has(upr)) return uptime(upr);
    if (has(d)) return `(exportMs - ${val(d)} / 1000)`;
    return undefined;
  };
  const startT = timeOf('startS', 'startMs', 'startUs', 'startNs', 'startUp', 'startDelta');
  const endT = timeOf('endS', 'endMs', 'endUs', 'endNs', 'endUp', 'endDelta');
  const dur = has('durMs') ? val('durMs') : has('durUs') ? `(${val('durUs')} / 1000)` : undefined;
  let times: string;
  if (startT !== undefined && endT !== undefined) times = `const ts = ${startT}; const te = ${endT};`;
  else if (endT !== undefined) times = `const te = ${endT}; const ts = ${dur !== undefined ? `te - ${dur}` : 'te'};`;
  else if (startT !== undefined) times = `const ts = ${startT}; const te = ${dur !== undefined ? `ts + ${dur}` : 'ts'};`;
  else times = 'const ts = exportMs; const te = exportMs;';

  // Sampling interval for this record.
  const fallback = has('sampler') ? `(smp.size > 0 ? (smp.get(${val('sampler')}) ?? defIv) : defIv)` : 'defIv';
  // PSAMP selector parameters in the record itself (RFC 5477): their interval when it names none.
  const selector = ['pktIv', 'size', 'prob', 'timeIv'].some(has)
    ? `sel(${['pktIv', 'pktSp', 'size', 'pop', 'prob', 'timeIv', 'timeSp'].map((r) => num(r, 'NaN')).join(', ')})`
    : undefined;
  // A record's own interval above the bound is refused and counted: the record is taken as if it
  // named none (its sampler's or the domain's interval, else 1).
  let iv: string;
  if (has('interval') || selector !== undefined) {
    const own = has('interval')
      ? selector === undefined
        ? `const v = ${val('interval')};`
        : `let v = ${val('interval')}; if (!(v >= 1)) v = ${selector};`
      : `const v = ${selector};`;
    iv = `let iv = defIv; if (ovr === 0) { ${own} if (v > ivMax) { refused++; iv = ${fallback}; } else iv = v >= 1 ? v : ${fallback}; }`;
  } else iv = `const iv = ${fallback === 'defIv' ? 'defIv' : `ovr > 0 ? ovr : ${fallback}`};`;

  // Counters scaled by the interval, exact: the float product while it is below 2^53 (every
  // honest flow), else scaleCount's nearest float and rest (see flow-batch.ts). Counters of
  // more than 4 bytes are read as two words so that nothing is rounded before the check.
  const count = (role: string, col: string, restCol: string): string => {
    if (!has(role)) return `${col}[r] = 0; ${restCol}[r] = 0;`;
    const l = g.len(role);
    const p = g.pos(role)!;
    const hi = l > 4 ? readUint(p, l - 4) : '0';
    const lo = l > 4 ? `dv.getUint32(${p}+${l - 4})` : readUint(p, l);
    const v = l > 4 ? '(h * 4294967296 + w) * iv' : 'w * iv';
    return `{ const h = ${hi}, w = ${lo}, v = ${v}; if (v < 9007199254740992) { ${col}[r] = v; ${restCol}[r] = 0; } else { ${col}[r] = wide(h, w, iv, W); ${restCol}[r] = W[0]; } }`;
  };

  // A sampled packet without counters of its own is one packet of its IP total length: the
  // record's ipTotalLength, else the outermost IP header's, else the frame size (which also
  // counts link-layer headers, unlike octetDeltaCount).
  const sectionBytes = [has('ipLength') ? val('ipLength') : '', 'S.ipLength', has('frameSize') ? val('frameSize') : '']
    .filter(Boolean)
    .join(' || ');
  const bytesCount =
    has('bytes') || !section ? count('bytes', 'cBytes', 'cBR') : `cBytes[r] = (${sectionBytes}) * iv; cBR[r] = 0;`;
  const packetsCount = has('packets') || !section ? count('packets', 'cPk', 'cPR') : `cPk[r] = iv; cPR[r] = 0;`;

  const src = [
    `"use strict";`,
    `return function decodeSet(b, p, end, out, x) {`,
    // A two-way record may add two rows.
    `  out.reserve(Math.floor((end - p) / ${minLength})${twoWay ? ' * 2' : ''});`,
    `  const dv = new DataView(b.buffer, b.byteOffset, b.length);`,
    `  const c = out.cols;`,
    `  const cRecv = c.received, cStart = c.start, cEnd = c.end, cBytes = c.bytes, cPk = c.packets,`,
    `    cSp = c.srcPort, cDp = c.dstPort, cPr = c.proto, cFl = c.tcpFlags, cTos = c.tos, cVer = c.ipVersion,`,
    `    cIv = c.samplingInterval, cIn = c.inputIf, cOut = c.outputIf, cSas = c.srcAs, cDas = c.dstAs, cBR = c.bytesRest, cPR = c.packetsRest;`,
    `  const aS = out.srcAddr, aD = out.dstAddr, aN = out.nextHop, aE = out.exporter, ex = x.exporter;`,
    ...(LITTLE_ENDIAN
      ? [
          // The batch's word views of its address columns (a view made here per set was most of
          // the garbage of the decode thread: ~1.5 KB per datagram).
          `  const aS32 = out.srcWords, aD32 = out.dstWords, aN32 = out.nextHopWords, aE32 = out.exporterWords;`,
          `  const e0 = ${exWord(0)}, e1 = ${exWord(4)}, e2 = ${exWord(8)}, e3 = ${exWord(12)};`,
        ]
      : []),
    `  const recv = x.receivedMs, exportMs = x.exportMs, up = x.sysUptimeMs, init = x.sysInitMs;`,
    `  const ovr = x.override, smp = x.samplers, defIv = ovr > 0 ? ovr : x.interval;`,
    `  const ivMax = x.maxInterval;`,
    `  let r = out.length, n = 0, refused = 0${twoWay ? ', rev = 0' : ''}${keyFromSection ? ', unread = 0' : ''};`,
    `  while (end - p >= ${minLength}) {`,
    ...body,
    `    const nx = ${recordEnd};`,
    `    n++;`,
    ...(kind === 'none'
      ? [`    p = nx; continue;`]
      : [
          ...sectionRead,
          single !== undefined ? `    const ver = ${single.ver};` : '',
          ...(keyFromSection ? [`    if (ver === 0) { unread++; p = nx; continue; }`] : []),
          LITTLE_ENDIAN ? `    const o4 = r * 4;` : `    const o = r * 16;`,
          ...keys,
          `    ${times}`,
          `    ${iv}`,
          `    cRecv[r] = recv; cStart[r] = ts; cEnd[r] = te;`,
          `    ${bytesCount}`,
          `    ${packetsCount}`,
          `    cSp[r] = ${single?.sp ?? 'sp'}; cDp[r] = dp; cPr[r] = proto;`,
          `    cFl[r] = ${single?.fl ?? 'fl'}; cTos[r] = ${single?.tos ?? 'tos'}; cVer[r] = ver; cIv[r] = iv;`,
          `    cIn[r] = ${num('inIf', '0')}; cOut[r] = ${num('outIf', '0')};`,
          `    cSas[r] = ${num('srcAs', '0')}; cDas[r] = ${num('dstAs', '0')};`,
          `    r++;`,
          // The return direction swaps the forward row just written, so it has the chosen copy's key.
          ...(twoWay
            ? reverseRowSource({
                has,
                val,
                count,
                words: LITTLE_ENDIAN,
                unspecified: (col) => {
                  const v = single?.ver;
                  if (v === '4') return write4(col, undefined);
                  if (v === '6') return write16(col, undefined);
                  return [`if (ver === 4) {`, ...write4(col, undefined), `} else {`, ...write16(col, undefined), `}`];
                },
              })
            : []),
          `    p = nx;`,
        ]),
    `  }`,
    `  out.length = r;`,
    `  x.refused += refused;`,
    ...(twoWay ? [`  x.reverseRows += rev;`] : []),
    ...(keyFromSection ? [`  x.sectionsUnreadable += unread;`] : []),
    `  return n;`,
    `};`,
  ].join('\n');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- see the module comment: integers only
  const decode = new Function('wide', 'W', 'sel', 'readIpPacket', 'readDataLinkFrame', 'S', src)(
    scaleCount,
    WIDE_REST,
    selectorInterval,
    readIpPacket,
    readDataLinkFrame,
    SECTION,
  ) as SetDecoder;
  return { decode, minLength, kind, namesSampler: has('sampler') };
}
