/**
 * Matching flows a page at a time, by time (flow start, newest first) or by
 * bytes (largest first), with a cursor that hands out every matching flow
 * exactly once, while flows keep arriving.
 *
 * - The first page fixes a snapshot, `asOf`: flows received before it. For a
 *   window that reaches into the open hour it is the newest received time
 *   already on disk (exclusive), so rows still in the writer's memory, or
 *   written later, are outside it on every page; once that time is older than
 *   `settledMs` (longer than the writer's flush interval), every row received
 *   then is on disk and it is included. For a past window it is the window's
 *   end. Every page reads [from, asOf).
 * - Rows are ordered by a full tuple of their fields (the sort field first),
 *   so the order is total and does not depend on where a row sits in a file
 *   (sealing rewrites an hour's file in another block order). Rows that are
 *   equal in every field cannot be told apart; the cursor counts how many of
 *   the last tuple were handed out.
 * - The count of matches is taken on the first page (filter columns only)
 *   and carried in the cursor.
 */
import { exactCount, formatAddress, type FlowBatch } from '../../common/flow-batch.js';
import { CaptureFile } from '../capture/capture-file.js';
import type { ColumnName } from '../capture/format.js';
import { scanMatches, type BlockRef, type MatchScanOptions } from './match-scan.js';

export type FlowOrder = 'time' | 'bytes';

/** Most flows per page. */
export const MAX_PAGE = 1000;

/** A flow as the analytics answers show it (times ms since epoch; counts exact). */
export interface AnalyticFlow {
  received: number;
  start: number;
  end: number;
  srcIp: string;
  dstIp: string;
  srcPort: number;
  dstPort: number;
  proto: number;
  tcpFlags: number;
  tos: number;
  inputIf: number;
  outputIf: number;
  srcAs: number;
  dstAs: number;
  exporter: string;
  packets: number | bigint;
  bytes: number | bigint;
}

/** Where the next page starts; opaque to clients. */
export interface FlowCursor {
  asOf: number;
  /** The count of matches, or null when the first page did not count them. */
  total: number | null;
  last: number[];
  /** Rows equal to `last` in every field already handed out. */
  seen: number;
}

export interface FlowPage {
  flows: AnalyticFlow[];
  /** Matching flows received in [from, asOf); null when not counted. */
  total: number | null;
  asOf: number;
  next: FlowCursor | undefined;
}

const COLUMNS: readonly ColumnName[] = [
  'received',
  'start',
  'end',
  'srcAddr',
  'dstAddr',
  'exporter',
  'srcPort',
  'dstPort',
  'proto',
  'tcpFlags',
  'tos',
  'inputIf',
  'outputIf',
  'srcAs',
  'dstAs',
  'bytes',
  'packets',
  'bytesRest',
  'packetsRest',
];

/** Numbers in a row's sort tuple (and a cursor's `last`). */
export const TUPLE_LENGTH = 28;

/** The sort tuple of a row: ascending order of this tuple is the page order. */
function tuple(b: FlowBatch, i: number, order: FlowOrder): number[] {
  const c = b.cols;
  const s = i * 4;
  const t = order === 'time' ? [-c.start[i]!, -c.bytes[i]!] : [-c.bytes[i]!, -c.start[i]!];
  t.push(
    -c.received[i]!,
    -c.end[i]!,
    b.srcWords[s]!,
    b.srcWords[s + 1]!,
    b.srcWords[s + 2]!,
    b.srcWords[s + 3]!,
    b.dstWords[s]!,
    b.dstWords[s + 1]!,
    b.dstWords[s + 2]!,
    b.dstWords[s + 3]!,
    c.srcPort[i]!,
    c.dstPort[i]!,
    c.proto[i]!,
    -c.packets[i]!,
    c.tcpFlags[i]!,
    c.tos[i]!,
    c.inputIf[i]!,
    c.outputIf[i]!,
    c.srcAs[i]!,
    c.dstAs[i]!,
    b.exporterWords[s]!,
    b.exporterWords[s + 1]!,
    b.exporterWords[s + 2]!,
    b.exporterWords[s + 3]!,
    c.bytesRest[i]!,
    c.packetsRest[i]!,
  );
  return t;
}

function compareTuples(a: readonly number[], b: readonly number[]): number {
  for (let k = 0; k < a.length; k++) {
    const d = a[k]! - b[k]!;
    if (d !== 0) return d;
  }
  return 0;
}

function flowOf(b: FlowBatch, i: number): AnalyticFlow {
  const c = b.cols;
  return {
    received: c.received[i]!,
    start: c.start[i]!,
    end: c.end[i]!,
    srcIp: formatAddress(b.srcAddr, i),
    dstIp: formatAddress(b.dstAddr, i),
    srcPort: c.srcPort[i]!,
    dstPort: c.dstPort[i]!,
    proto: c.proto[i]!,
    tcpFlags: c.tcpFlags[i]!,
    tos: c.tos[i]!,
    inputIf: c.inputIf[i]!,
    outputIf: c.outputIf[i]!,
    srcAs: c.srcAs[i]!,
    dstAs: c.dstAs[i]!,
    exporter: formatAddress(b.exporter, i),
    packets: exactCount(c.packets[i]!, c.packetsRest[i]!),
    bytes: exactCount(c.bytes[i]!, c.bytesRest[i]!),
  };
}

/** The snapshot end of a first page: see the module comment. */
export function snapshotEnd(
  scan: Pick<MatchScanOptions, 'files' | 'from' | 'to'>,
  newestOnDisk: (path: string) => number,
  now: number,
  settledMs = Number.POSITIVE_INFINITY,
): number {
  // The newest time on disk, and the rows received in that same millisecond with it once no more
  // can follow (a quiet exporter's last burst is then listed, not held back until more arrives).
  const end = (newest: number): number => (now - newest > settledMs ? newest + 1 : newest);
  let asOf = scan.to;
  // A window that reaches the present: what arrives later, or is still in the writer's memory,
  // comes after the newest received time on disk, whichever file holds it (an hour just begun
  // may have no file yet).
  const live = scan.to > now;
  let newestAll = scan.from;
  for (const f of scan.files) {
    if (f.hourEnd <= scan.from || f.hourStart >= scan.to) continue;
    if (f.kind !== 'current' && !live) continue;
    const newest = newestOnDisk(f.path);
    if (newest > newestAll) newestAll = newest;
    if (f.kind === 'current' && end(newest) < asOf) asOf = Math.max(scan.from, end(newest));
  }
  if (live) asOf = Math.min(asOf, Math.min(now, end(newestAll)));
  return asOf;
}

/** The newest received time already written to a capture file (0 when none can be read). */
export function newestOnDisk(path: string): number {
  try {
    const f = CaptureFile.open(path);
    try {
      let newest = 0;
      for (const b of f.blocks) if (b.receivedMax > newest) newest = b.receivedMax;
      return newest;
    } finally {
      f.close();
    }
  } catch {
    return 0;
  }
}

/**
 * One page. `scan.to` must already be the snapshot end (`cursor.asOf` on
 * later pages); `total` is the count for the first page.
 */
export async function flowPage(
  scan: Omit<MatchScanOptions, 'columns' | 'order'>,
  opts: { order: FlowOrder; limit: number; cursor?: FlowCursor; total: number | null },
): Promise<FlowPage> {
  const { order, limit, cursor } = opts;
  // One row more than the page tells whether there is a next page.
  const want = limit + 1;
  type Kept = { t: number[]; flow: AnalyticFlow };
  let kept: Kept[] = [];
  let skipEqual = cursor?.seen ?? 0;
  const cmp = (a: Kept, b: Kept): number => compareTuples(a.t, b.t);
  // Only the newest blocks can hold the first rows by time: visit by newest start, stop when none can.
  const byStart = (refs: BlockRef[]): BlockRef[] => [...refs].sort((a, b) => b.startMax - a.startMax);
  // The sort field of the `want`-th best row so far (set only when `kept` was just sorted): a row worse
  // than it cannot be on the page. For time order it also ends the walk over blocks.
  let bar = Infinity;
  const cut = (): void => {
    kept = kept.sort(cmp).slice(0, want);
    if (kept.length === want) bar = kept[want - 1]!.t[0]!;
  };
  await scanMatches({ ...scan, columns: COLUMNS, order: order === 'time' ? byStart : undefined }, (m) => {
    if (order === 'time' && -m.ref.startMax > bar) return false;
    const b = m.batch;
    const primary = order === 'time' ? b.cols.start : b.cols.bytes;
    for (let r = 0; r < m.n; r++) {
      const i = m.idx[r]!;
      // Cheap checks on the sort field before a tuple is built.
      const p = -primary[i]!;
      if (p > bar) continue;
      if (cursor && p < cursor.last[0]!) continue;
      const t = tuple(b, i, order);
      if (cursor) {
        const c = compareTuples(t, cursor.last);
        if (c < 0) continue;
        // Rows identical to the cursor's last: it says how many were handed out.
        if (c === 0 && skipEqual > 0) {
          skipEqual--;
          continue;
        }
      }
      kept.push({ t, flow: flowOf(b, i) });
      if (kept.length >= 2 * want) cut();
    }
    cut();
    return true;
  });
  const page = kept.slice(0, limit);
  let next: FlowCursor | undefined;
  if (kept.length > limit && limit > 0) {
    const last = page[page.length - 1]!.t;
    let seen = 0;
    for (const k of page) if (compareTuples(k.t, last) === 0) seen++;
    if (cursor && compareTuples(cursor.last, last) === 0) seen += cursor.seen;
    next = { asOf: scan.to, total: opts.total, last, seen };
  }
  return { flows: page.map((k) => k.flow), total: opts.total, asOf: scan.to, next };
}
