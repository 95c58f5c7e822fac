/**
 * The rows of capture files that a query looks at: those received in the
 * window and accepted by the filter, a block at a time.
 *
 * A block is skipped without decoding when the footer says it lies outside
 * the window, or when the filter, asked with the block's per-column min/max,
 * says no row can match. A block the filter accepts whole (and the window
 * covers whole) needs no per-row test. In a block ordered by protocol and
 * destination port (as sealing writes them), a filter on either finds its
 * rows by bisection (sorted-ranges.ts) instead of testing each.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { FlowBatch } from '../../common/flow-batch.js';
import { CaptureFile } from '../capture/capture-file.js';
import { CodecSet } from '../capture/codec.js';
import { plainValueAt, type PlainColumn } from '../capture/column-codec.js';
import { ALL_COLUMNS, CaptureFileError, ROW_ORDER, withDependencies, type ColumnName } from '../capture/format.js';
import type { CaptureFileInfo, ReadStats } from '../capture/reader.js';
import { bisectionHelps, keysOnly, sortedRanges, type SortedRanges } from './sorted-ranges.js';

/** The columns a block ordered by protocol and destination port is ordered by (ROW_ORDER.protoDstPort). */
const KEY_COLUMNS: readonly ColumnName[] = ['proto', 'dstPort'];

/** Bisections of ordered blocks (sorted-ranges.ts) that may give up in one scan before it stops trying them. */
const GIVE_UPS = 2;

/** Blocks scanned between turns of the event loop (a block is up to 65 536 rows). */
const YIELD_EVERY = 2;

/**
 * Batches of finished scans, kept for the next ones: the columns of a block's rows are about
 * 10 MB, and allocating them anew per query cost more than a count of an hour's matches.
 * Two running queries of two batches each; larger batches (a file written with larger blocks)
 * are let go.
 */
const spareBatches: FlowBatch[] = [];
const MAX_SPARE_BATCHES = 4;
const MAX_SPARE_ROWS = 1 << 17;

function takeBatch(): FlowBatch {
  const b = spareBatches.pop() ?? new FlowBatch(4096);
  b.length = 0;
  return b;
}

function giveBack(...batches: FlowBatch[]): void {
  for (const b of batches) if (spareBatches.length < MAX_SPARE_BATCHES && b.capacity <= MAX_SPARE_ROWS) spareBatches.push(b);
}

/** A compiled filter, as the scan uses it (storage/flow-query/filter-compile.ts). */
export interface RowFilter {
  /** The columns the predicate reads. */
  readonly columns: readonly ColumnName[];
  /** From a block's per-column min/max: 'none' skips the block, 'all' takes every row. */
  block(stats: (column: ColumnName) => { min: number; max: number } | undefined): 'none' | 'some' | 'all';
  /** Writes the indices of matching rows in [from, to) of `batch` into `out`, ascending; returns how many. */
  select(batch: FlowBatch, from: number, to: number, out: Uint32Array): number;
  /** How many of a block's rows (of rows [from, to)) match, from its columns as stored; undefined: decode and select instead. */
  countPlain?(columns: ReadonlyMap<ColumnName, PlainColumn>, rows: number, from?: number, to?: number): number | undefined;
}

/** What a scan reads. */
export interface MatchScanOptions {
  files: readonly CaptureFileInfo[];
  /** Received-time window, ms, [from, to). */
  from: number;
  to: number;
  filter?: RowFilter;
  /** Columns the caller reads from the batch (besides the filter's). */
  columns: readonly ColumnName[];
  stats: ReadStats;
  onError?: (err: CaptureFileError) => void;
  /** Visit blocks in this order instead of file order (e.g. newest first); return false to skip one. */
  order?: (blocks: BlockRef[]) => BlockRef[];
  /**
   * Visit only the blocks a plan hands out, for scans of the same files in several threads
   * (block-claims.ts); a function makes the plan once the blocks are known (undefined: all of
   * them). Blocks are numbered after the window and `order`.
   */
  part?: BlockPlan | ((blocks: readonly BlockRef[]) => BlockPlan | undefined);
  /** Ends the scan between blocks once aborted (what was visited stays visited). */
  signal?: AbortSignal;
  /**
   * The visitor reads only each block's `n`: a block may then be counted without being decoded
   * (every row of a block the filter takes whole; the filter's count over the columns as
   * stored), and its Matches then hold no rows.
   */
  countOnly?: boolean;
}

/** Which of its blocks a scan visits, when scans of the same files in other threads visit the rest. */
export interface BlockPlan {
  /** The number of the next block to visit, or -1 when there is none left for this scan. */
  next(): number;
  /**
   * Whether this scan counts what every scan of the files meets alike: damaged files (passed to
   * `onError` too) and blocks outside the window. One of the scans should; a function's plan does.
   */
  readonly counts: boolean;
  /**
   * Whether this scan found the blocks the plan was made for (the files may have changed since
   * another thread's scan opened them: an open hour sealed and renamed, an old hour removed); a
   * scan that did not takes none of them.
   */
  fits?(blocks: readonly BlockRef[]): boolean;
}

/** A block of an opened file, with its footer's ranges. */
export interface BlockRef {
  file: CaptureFile;
  block: number;
  receivedMin: number;
  receivedMax: number;
  startMax: number;
}

/** The matching rows of one block: `batch` rows `idx[0 … n)`, ascending. Valid until the next step of the scan. */
export interface Matches {
  batch: FlowBatch;
  idx: Uint32Array;
  n: number;
  ref: BlockRef;
}

/**
 * Calls `visit` with the matching rows of each block, in file order (or
 * `order`'s). `visit` may answer false to end the scan early. Damaged files
 * and blocks are counted and skipped.
 */
export async function scanMatches(opts: MatchScanOptions, visit: (m: Matches) => boolean | void): Promise<void> {
  const { stats } = opts;
  const codecs = new CodecSet();
  // `received` is decoded only for blocks the window cuts, unless something else needs it.
  const inner = [...withDependencies([...opts.columns, ...(opts.filter?.columns ?? [])])];
  const cut = [...withDependencies([...inner, 'received'])];
  // With a filter, its columns are decoded first; the caller's others only once rows matched,
  // and only for those rows when they are few (a selective filter decodes little).
  const filterOnly = opts.filter ? [...withDependencies(opts.filter.columns)] : [];
  const filterCut = [...withDependencies([...filterOnly, 'received'])];
  const rest = [...withDependencies(opts.columns.filter((c) => !filterOnly.includes(c)))];
  // In a block ordered by protocol and destination port, a filter on either finds its rows by
  // bisection (sorted-ranges.ts) over both columns as stored: read with the filter's columns.
  const bisect = opts.filter !== undefined && bisectionHelps(opts.filter.columns);
  const decides = opts.filter !== undefined && keysOnly(opts.filter.columns);
  const byPort = opts.filter?.columns.includes('dstPort') ?? false;
  const filterKeyed = bisect ? [...withDependencies([...filterOnly, ...KEY_COLUMNS])] : filterOnly;
  // The filter's columns a bisection has not already read (and checked) as stored.
  const filterBesideKeys = filterOnly.filter((c) => !KEY_COLUMNS.includes(c));
  // What is read from the file: what may be decoded (the bisection's columns too).
  const innerLoad = bisect ? [...withDependencies([...inner, ...filterKeyed])] : inner;
  const cutLoad = bisect ? [...withDependencies([...cut, ...filterKeyed])] : cut;
  let ranges: SortedRanges | undefined;
  let gaveUp = 0;
  // The rows picked out of a block go to a batch of their own: every column the caller reads, the filter's too.
  const callerColumns = [...withDependencies(opts.columns)];
  const opened: CaptureFile[] = [];
  const batch = takeBatch();
  const picked = takeBatch();
  let idx = new Uint32Array(4096);
  let identity = Uint32Array.from({ length: 4096 }, (_, i) => i);
  // Another thread's scan may count what all of them meet alike (damaged files, blocks outside the window).
  const counts = typeof opts.part !== 'object' || opts.part.counts;
  try {
    let refs: BlockRef[] = [];
    for (const info of opts.files) {
      if (info.hourEnd <= opts.from || info.hourStart >= opts.to) continue;
      let f: CaptureFile;
      try {
        f = CaptureFile.open(info.path, { requireSealed: info.kind === 'sealed', codecs, reuseBlockBuffer: true });
        stats.filesOpened++;
      } catch (err) {
        if (!(err instanceof CaptureFileError)) throw err;
        if (err.code === 'io' && info.kind === 'current') continue; // sealed and renamed meanwhile
        if (counts) {
          stats.corruptFiles++;
          opts.onError?.(err);
        }
        continue;
      }
      opened.push(f);
      f.blocks.forEach((b, i) => {
        if (b.receivedMax < opts.from || b.receivedMin >= opts.to) {
          if (counts) stats.blocksSkipped++;
        } else refs.push({ file: f, block: i, receivedMin: b.receivedMin, receivedMax: b.receivedMax, startMax: b.startMax });
      });
    }
    if (opts.order) refs = opts.order(refs);
    const plan = typeof opts.part === 'function' ? opts.part(refs) : opts.part;
    const fits = plan?.fits === undefined || plan.fits(refs);
    /**
     * The ranges of a block ordered by protocol and port that the filter may match
     * (sorted-ranges.ts), from those two columns as stored (`plain` holds them); undefined when the
     * bisection gave up: the caller then tests every row. After GIVE_UPS bisections of this scan
     * gave up (a filter whose verdict the two columns cannot settle, as `port 443`'s source side),
     * no more are tried.
     */
    const keyedRanges = (
      plain: ReadonlyMap<ColumnName, PlainColumn>,
      rows: number,
      byName: BlockStatsMap,
    ): SortedRanges | undefined => {
      const proto = plain.get('proto');
      const port = plain.get('dstPort');
      if (!proto || !port || gaveUp >= GIVE_UPS) return undefined;
      const r = sortedRanges(
        rows,
        plainValueAt(proto, rows, 'proto'),
        plainValueAt(port, rows, 'dstPort'),
        (c) => byName.get(c),
        (st) => opts.filter!.block(st),
        ranges,
        decides,
        byPort,
      );
      if (r)
        ranges = r; // kept for the next block's ranges
      else gaveUp++;
      return r;
    };
    /** The count of a keyed block's matches from its columns as stored; undefined: count every row instead. */
    const countKeyed = (plain: ReadonlyMap<ColumnName, PlainColumn>, rows: number, byName: BlockStatsMap): number | undefined => {
      const r = keyedRanges(plain, rows, byName);
      if (!r) return undefined;
      let m = 0;
      for (let k = 0; k < r.count; k++) {
        const from = r.from[k]!;
        const to = r.to[k]!;
        if (r.whole[k]) m += to - from;
        else {
          const c = opts.filter!.countPlain!(plain, rows, from, to);
          if (c === undefined) return undefined;
          m += c;
        }
      }
      return m;
    };
    /** The matching rows of one block; undefined when it has none. Throws CaptureFileError. */
    const matchesOf = (ref: BlockRef): Matches | undefined => {
      const whole = ref.receivedMin >= opts.from && ref.receivedMax < opts.to;
      // Only the columns this scan may decode are read from the file.
      const loaded = ref.file.loadBlock(ref.block, whole ? innerLoad : cutLoad);
      let verdict: 'none' | 'some' | 'all' = 'all';
      let byName: Map<ColumnName, { min: number; max: number }> | undefined;
      if (opts.filter) {
        byName = new Map<ColumnName, { min: number; max: number }>();
        for (const c of loaded.columns) {
          const name = ALL_COLUMNS[c.id];
          if (name) byName.set(name, c);
        }
        verdict = opts.filter.block((name) => byName!.get(name));
      }
      if (verdict === 'none') {
        stats.blocksSkipped++;
        return undefined;
      }
      if (opts.countOnly && whole) {
        let counted: number | undefined;
        if (verdict === 'all') {
          // Every row matches: the filter's columns are checked, not decoded (a damaged block is
          // skipped and counted here as a scan that decodes it would).
          ref.file.checkColumns(ref.block, filterOnly, loaded);
          counted = loaded.rows;
        } else if (opts.filter?.countPlain) {
          const keyed = bisect && loaded.rowOrder === ROW_ORDER.protoDstPort;
          const plain = ref.file.plainColumns(ref.block, keyed ? filterKeyed : filterOnly, loaded);
          if (plain && keyed) counted = countKeyed(plain, loaded.rows, byName!);
          if (plain && counted === undefined) counted = opts.filter.countPlain(plain, loaded.rows);
        }
        if (counted !== undefined) {
          stats.blocksRead++;
          stats.rowsRead += loaded.rows;
          batch.length = 0;
          return counted === 0 ? undefined : { batch, idx, n: counted, ref };
        }
      }
      batch.length = 0;
      const some = verdict === 'some';
      // A block ordered by protocol and port: the ranges the filter may match, from those two
      // columns as stored (not decoded); the filter's columns are decoded only to test the
      // ranges it leaves undecided.
      let r: SortedRanges | undefined;
      if (some && bisect && gaveUp < GIVE_UPS && loaded.rowOrder === ROW_ORDER.protoDstPort) {
        const plain = ref.file.plainColumns(ref.block, KEY_COLUMNS, loaded);
        if (plain) r = keyedRanges(plain, loaded.rows, byName!);
      }
      let decodeFilter = true;
      if (r && whole) {
        decodeFilter = false;
        for (let k = 0; k < r.count; k++) if (!r.whole[k]) decodeFilter = true;
        // Not decoded, the filter's columns are still checked: a damaged one skips the block here
        // as it does where they are decoded (and in the count).
        if (!decodeFilter) ref.file.checkColumns(ref.block, filterBesideKeys, loaded);
      }
      ref.file.readBlock(
        ref.block,
        !some ? (whole ? inner : cut) : decodeFilter ? (whole ? filterOnly : filterCut) : [],
        batch,
        0,
        loaded,
      );
      stats.blocksRead++;
      const rows = batch.length;
      if (idx.length < rows) idx = new Uint32Array(rows);
      let n: number;
      if (verdict === 'all') {
        for (let i = 0; i < rows; i++) idx[i] = i;
        n = rows;
      } else if (r) {
        n = 0;
        for (let k = 0; k < r.count; k++) {
          const from = r.from[k]!;
          const to = r.to[k]!;
          if (r.whole[k]) for (let i = from; i < to; i++) idx[n++] = i;
          else n += opts.filter!.select(batch, from, to, idx.subarray(n));
        }
      } else {
        n = opts.filter!.select(batch, 0, rows, idx);
      }
      if (!whole) n = keepInWindow(batch, idx, n, opts.from, opts.to);
      stats.rowsRead += rows;
      if (n === 0) return undefined;
      // The caller's columns not decoded yet: those besides the filter's, or all of them.
      const restRead = decodeFilter ? rest : callerColumns;
      if (!some || restRead.length === 0) return { batch, idx, n, ref };
      if (n * 4 >= rows) {
        ref.file.readBlock(ref.block, restRead, batch, 0, loaded);
        return { batch, idx, n, ref };
      }
      // Few rows matched: decode the caller's columns of those rows only, into rows 0 … n.
      picked.length = 0;
      picked.reserve(n);
      ref.file.readBlockRows(ref.block, idx.subarray(0, n), callerColumns, picked, 0, loaded);
      picked.length = n;
      if (identity.length < n) identity = Uint32Array.from({ length: Math.max(n, identity.length * 2) }, (_, i) => i);
      return { batch: picked, idx: identity, n, ref };
    };
    let sinceYield = 0;
    for (let k = 0; fits; k++) {
      if (opts.signal?.aborted) break;
      const at = plan ? plan.next() : k;
      if (at < 0 || at >= refs.length) break;
      const ref = refs[at]!;
      // A long scan gives the event loop a turn every few blocks, so the API keeps answering.
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToLoop();
      }
      let out: Matches | undefined;
      try {
        out = matchesOf(ref);
      } catch (err) {
        // A damaged block (index, column, or the rows picked from it) is counted and skipped.
        if (!(err instanceof CaptureFileError)) throw err;
        stats.corruptBlocks++;
        opts.onError?.(err);
        continue;
      }
      if (out && visit(out) === false) break;
    }
  } finally {
    for (const f of opened) f.close();
    giveBack(batch, picked);
  }
}

/** Keeps the rows of idx[0 … n) received in [lo, hi), in order; answers how many. */
function keepInWindow(batch: FlowBatch, idx: Uint32Array, n: number, lo: number, hi: number): number {
  const rec = batch.cols.received;
  let k = 0;
  for (let j = 0; j < n; j++) {
    const i = idx[j]!;
    const r = rec[i]!;
    if (r >= lo && r < hi) idx[k++] = i;
  }
  return k;
}

type BlockStatsMap = ReadonlyMap<ColumnName, { min: number; max: number }>;
