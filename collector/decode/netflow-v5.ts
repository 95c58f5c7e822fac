/**
 * NetFlow v5: a fixed 24-byte header and up to 30 fixed 48-byte records.
 *
 * ```
 *  0      2      4          8          12          16        20  21  22
 *  +------+------+----------+----------+-----------+---------+---+---+------+
 *  | ver  |count | sysUptime| unixSecs | unixNsecs | flowSeq |eT |eId|sampl.|
 *  +------+------+----------+----------+-----------+---------+---+---+------+
 *  record (48): src 0, dst 4, nexthop 8, in 12, out 14, pkts 16, octets 20,
 *  first 24, last 28, sport 32, dport 34, pad 36, flags 37, proto 38, tos 39,
 *  srcAs 40, dstAs 42, srcMask 44, dstMask 45, pad 46
 * ```
 * The sampling word holds the mode in its top 2 bits and the interval in the
 * low 14; flowSeq counts flows (not packets), so the next header's sequence
 * is this one's plus `count`.
 */
import type { DecodeEnv, ValueLimits } from './decode-env.js';
import { EXACT_FLOAT_LIMIT, scaleCount, type FlowBatch } from '../../common/flow-batch.js';
import { clampTimes } from './flow-times.js';
import { normaliseInterval } from './sampling.js';

/** Bytes in the v5 header. */
export const V5_HEADER_LENGTH = 24;
/** Bytes in one v5 record. */
export const V5_RECORD_LENGTH = 48;
/** Most records a v5 datagram may carry (Cisco's limit; larger counts are corrupt). */
export const V5_MAX_RECORDS = 30;

/** What the v5 header says, for sequence tracking and counters. */
export interface V5Header {
  count: number;
  sequence: number;
  engineType: number;
  engineId: number;
  samplingInterval: number;
}

/** Reads and checks the header; undefined when the datagram cannot be v5. */
export function readV5Header(buf: Buffer): V5Header | undefined {
  if (buf.length < V5_HEADER_LENGTH) return undefined;
  const count = buf.readUInt16BE(2);
  if (count > V5_MAX_RECORDS) return undefined;
  if (V5_HEADER_LENGTH + count * V5_RECORD_LENGTH > buf.length) return undefined;
  const sampling = buf.readUInt16BE(22) & 0x3fff;
  return {
    count,
    sequence: buf.readUInt32BE(16),
    engineType: buf[20]!,
    engineId: buf[21]!,
    samplingInterval: sampling,
  };
}

/** Plausibility checks for decodeV5Records: the bounds, and how many flow times they replaced (added to). */
export interface V5Checks {
  readonly limits: ValueLimits;
  clamped: number;
}

// Reused by decodeV5Datagram (decoding is synchronous and never re-entered).
const checks: { limits: ValueLimits; clamped: number } = {
  limits: { minTimeMs: -Infinity, maxFutureMs: Infinity, maxSamplingInterval: Infinity },
  clamped: 0,
};

/**
 * Decodes a checked v5 datagram for the flow decoder: resolves the sampling interval (the
 * configured override, else the header's; a header interval above the bound is refused, counted,
 * and the flows taken as unsampled, as v5 has nothing else to fall back on), clamps implausible
 * flow times and counts them. Returns rows added.
 */
export function decodeV5Datagram(buf: Buffer, header: V5Header, env: DecodeEnv, out: FlowBatch): number {
  let interval = env.overrideInterval;
  if (interval === 0) {
    interval = normaliseInterval(header.samplingInterval);
    if (interval > env.limits.maxSamplingInterval) {
      env.counters.add(env.exporterCounters, 'samplingRefused');
      interval = 1;
    }
  }
  checks.limits = env.limits;
  checks.clamped = 0;
  const rows = decodeV5Records(buf, header, env.exporter.bytes16, env.receivedMs, interval, out, checks);
  if (checks.clamped > 0) env.counters.add(env.exporterCounters, 'timestampsClamped', checks.clamped);
  return rows;
}

/**
 * Appends the records of a checked v5 datagram to `out`; returns rows added.
 * `interval` is the sampling interval to apply (≥ 1), already resolved
 * against any configured override. With `checks`, a flow time outside the
 * plausible window (anchored on `receivedMs`) becomes the header's export
 * time (the received time when that is implausible too) and is counted there.
 */
export function decodeV5Records(
  buf: Buffer,
  header: V5Header,
  exporter: Uint8Array,
  receivedMs: number,
  interval: number,
  out: FlowBatch,
  checks?: V5Checks,
): number {
  const count = header.count;
  out.reserve(count);
  const uptime = buf.readUInt32BE(4);
  // Header time in ms; nsecs refines the second (sub-ms part dropped).
  const exportMs = buf.readUInt32BE(8) * 1000 + Math.floor(buf.readUInt32BE(12) / 1e6);
  const c = out.cols;
  const first = out.length;
  const src = out.srcAddr;
  const dst = out.dstAddr;
  const nh = out.nextHop;
  const ex = out.exporter;
  let row = out.length;
  for (let k = 0, p = V5_HEADER_LENGTH; k < count; k++, p += V5_RECORD_LENGTH) {
    const o = row * 16;
    writeV4(src, o, buf, p);
    writeV4(dst, o, buf, p + 4);
    writeV4(nh, o, buf, p + 8);
    for (let j = 0; j < 16; j++) ex[o + j] = exporter[j]!;
    c.inputIf[row] = (buf[p + 12]! << 8) | buf[p + 13]!;
    c.outputIf[row] = (buf[p + 14]! << 8) | buf[p + 15]!;
    c.packets[row] = buf.readUInt32BE(p + 16) * interval;
    c.bytes[row] = buf.readUInt32BE(p + 20) * interval;
    // Uptime-relative: a signed 32-bit difference survives the uptime wrap
    // (every 49.7 days) and a first/last a few ms after the header's uptime.
    c.start[row] = exportMs - ((uptime - buf.readUInt32BE(p + 24)) | 0);
    c.end[row] = exportMs - ((uptime - buf.readUInt32BE(p + 28)) | 0);
    c.received[row] = receivedMs;
    c.srcPort[row] = (buf[p + 32]! << 8) | buf[p + 33]!;
    c.dstPort[row] = (buf[p + 34]! << 8) | buf[p + 35]!;
    c.tcpFlags[row] = buf[p + 37]!;
    c.proto[row] = buf[p + 38]!;
    c.tos[row] = buf[p + 39]!;
    c.srcAs[row] = (buf[p + 40]! << 8) | buf[p + 41]!;
    c.dstAs[row] = (buf[p + 42]! << 8) | buf[p + 43]!;
    c.ipVersion[row] = 4;
    c.samplingInterval[row] = interval;
    row++;
  }
  out.length = row;
  // The rest of the work in functions of their own, over the rows just written: inside the
  // loop above (or in this function) it made every v5 record a third slower (measured), which
  // is what V8 inlining a smaller function saves.
  restColumns(buf, out, first, interval);
  if (checks) checks.clamped += clampTimes(c.start, c.end, first, row, exportMs, receivedMs, checks.limits);
  return count;
}

/** Fills the rest columns of rows [first, out.length) of a v5 datagram: zero, unless the interval makes u32 counts wider than 2^53. */
function restColumns(buf: Buffer, out: FlowBatch, first: number, interval: number): void {
  const c = out.cols;
  const row = out.length;
  // u32 counters times the interval stay below 2^53 unless a configured override is above 2^21.
  if (interval * 0xffffffff < EXACT_FLOAT_LIMIT) {
    const pr = c.packetsRest;
    const br = c.bytesRest;
    for (let i = first; i < row; i++) {
      pr[i] = 0;
      br[i] = 0;
    }
    return;
  }
  for (let i = first, p = V5_HEADER_LENGTH; i < row; i++, p += V5_RECORD_LENGTH) {
    c.packets[i] = scaleCount(0, buf.readUInt32BE(p + 16), interval, WIDE_REST);
    c.packetsRest[i] = WIDE_REST[0]!;
    c.bytes[i] = scaleCount(0, buf.readUInt32BE(p + 20), interval, WIDE_REST);
    c.bytesRest[i] = WIDE_REST[0]!;
  }
}

const WIDE_REST = new Float64Array(1);

function writeV4(col: Uint8Array, o: number, buf: Buffer, p: number): void {
  for (let j = 0; j < 10; j++) col[o + j] = 0;
  col[o + 10] = 0xff;
  col[o + 11] = 0xff;
  col[o + 12] = buf[p]!;
  col[o + 13] = buf[p + 1]!;
  col[o + 14] = buf[p + 2]!;
  col[o + 15] = buf[p + 3]!;
}
