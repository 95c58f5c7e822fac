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
  const opened: CaptureFile[] = [];
  const scan = new BlockScan(opts);
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
        out = scan.matchesOf(ref);
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
    scan.close();
  }
}

/**
 * One scan's reading of its blocks: the column lists it decodes, its batches, and the state its
 * bisections keep from block to block. A class at module level, not closures made per scan: V8
 * keeps a function's optimised code with the closure, and a closure made anew by every query was
 * compiled again by every query (tens of milliseconds of a core each time, in both threads).
 */
class BlockScan {
  private readonly stats: ReadStats;
  private readonly filter: RowFilter | undefined;
  private readonly countOnly: boolean;
  private readonly from: number;
  private readonly to: number;
  // Column lists: `received` is decoded only for blocks the window cuts, unless something else needs it.
  private readonly inner: ColumnName[];
  private readonly cut: ColumnName[];
  // With a filter, its columns are decoded first; the caller's others only once rows matched,
  // and only for those rows when they are few (a selective filter decodes little).
  private readonly filterOnly: ColumnName[];
  private readonly filterCut: ColumnName[];
  private readonly rest: ColumnName[];
  // In a block ordered by protocol and destination port, a filter on either finds its rows by
  // bisection (sorted-ranges.ts) over both columns as stored: read with the filter's columns.
  private readonly bisect: boolean;
  private readonly decides: boolean;
  private readonly byPort: boolean;
  private readonly filterKeyed: ColumnName[];
  /** The filter's columns a bisection has not already read (and checked) as stored. */
  private readonly filterBesideKeys: ColumnName[];
  // What is read from the file: what may be decoded (the bisection's columns too).
  private readonly innerLoad: ColumnName[];
  private readonly cutLoad: ColumnName[];
  /** The rows picked out of a block go to a batch of their own: every column the caller reads, the filter's too. */
  private readonly callerColumns: ColumnName[];
  private ranges: SortedRanges | undefined;
  private gaveUp = 0;
  private readonly batch = takeBatch();
  private readonly picked = takeBatch();
  private idx = new Uint32Array(4096);
  private identity = Uint32Array.from({ length: 4096 }, (_, i) => i);

  constructor(opts: MatchScanOptions) {
    this.stats = opts.stats;
    this.filter = opts.filter;
    this.countOnly = opts.countOnly === true;
    this.from = opts.from;
    this.to = opts.to;
    const filter = opts.filter;
    this.inner = [...withDependencies([...opts.columns, ...(filter?.columns ?? [])])];
    this.cut = [...withDependencies([...this.inner, 'received'])];
    this.filterOnly = filter ? [...withDependencies(filter.columns)] : [];
    this.filterCut = [...withDependencies([...this.filterOnly, 'received'])];
    this.rest = [...withDependencies(opts.columns.filter((c) => !this.filterOnly.includes(c)))];
    this.bisect = filter !== undefined && bisectionHelps(filter.columns);
    this.decides = filter !== undefined && keysOnly(filter.columns);
    this.byPort = filter?.columns.includes('dstPort') ?? false;
    this.filterKeyed = this.bisect ? [...withDependencies([...this.filterOnly, ...KEY_COLUMNS])] : this.filterOnly;
    this.filterBesideKeys = this.filterOnly.filter((c) => !KEY_COLUMNS.includes(c));
    this.innerLoad = this.bisect ? [...withDependencies([...this.inner, ...this.filterKeyed])] : this.inner;
    this.cutLoad = this.bisect ? [...withDependencies([...this.cut, ...this.filterKeyed])] : this.cut;
    this.callerColumns = [...withDependencies(opts.columns)];
  }

  /** Gives the batches back for the next scans. */
  close(): void {
    giveBack(this.batch, this.picked);
  }

  /**
   * The ranges of a block ordered by protocol and port that the filter may match
   * (sorted-ranges.ts), from those two columns as stored (`plain` holds them); undefined when the
   * bisection gave up: the caller then tests every row. After GIVE_UPS bisections of this scan
   * gave up (a filter whose verdict the two columns cannot settle, as `port 443`'s source side),
   * no more are tried.
   */
  private keyedRanges(
    plain: ReadonlyMap<ColumnName, PlainColumn>,
    rows: number,
    byName: BlockStatsMap,
  ): SortedRanges | undefined {
    const proto = plain.get('proto');
    const port = plain.get('dstPort');
    if (!proto || !port || this.gaveUp >= GIVE_UPS) return undefined;
    const filter = this.filter!;
    const r = sortedRanges(
      rows,
      plainValueAt(proto, rows, 'proto'),
      plainValueAt(port, rows, 'dstPort'),
      (c) => byName.get(c),
      (st) => filter.block(st),
      this.ranges,
      this.decides,
      this.byPort,
    );
    if (r)
      this.ranges = r; // kept for the next block's ranges
    else this.gaveUp++;
    return r;
  }

  /** The count of a keyed block's matches from its columns as stored; undefined: count every row instead. */
  private countKeyed(plain: ReadonlyMap<ColumnName, PlainColumn>, rows: number, byName: BlockStatsMap): number | undefined {
    const r = this.keyedRanges(plain, rows, byName);
    if (!r) return undefined;
    let m = 0;
    for (let k = 0; k < r.count; k++) {
      const from = r.from[k]!;
      const to = r.to[k]!;
      if (r.whole[k]) m += to - from;
      else {
        const c = this.filter!.countPlain!(plain, rows, from, to);
        if (c === undefined) return undefined;
        m += c;
      }
    }
    return m;
  }

  /** The matching rows of one block; undefined when it has none. Throws CaptureFileError. */
  matchesOf(ref: BlockRef): Matches | undefined {
    const { stats, filter, batch } = this;
    const whole = ref.receivedMin >= this.from && ref.receivedMax < this.to;
    // Only the columns this scan may decode are read from the file.
    const loaded = ref.file.loadBlock(ref.block, whole ? this.innerLoad : this.cutLoad);
    let verdict: 'none' | 'some' | 'all' = 'all';
    let byName: Map<ColumnName, { min: number; max: number }> | undefined;
    if (filter) {
      byName = new Map<ColumnName, { min: number; max: number }>();
      for (const c of loaded.columns) {
        const name = ALL_COLUMNS[c.id];
        if (name) byName.set(name, c);
      }
      verdict = filter.block((name) => byName!.get(name));
    }
    if (verdict === 'none') {
      stats.blocksSkipped++;
      return undefined;
    }
    if (this.countOnly && whole) {
      let counted: number | undefined;
      if (verdict === 'all') {
        // Every row matches: the filter's columns are checked, not decoded (a damaged block is
        // skipped and counted here as a scan that decodes it would).
        ref.file.checkColumns(ref.block, this.filterOnly, loaded);
        counted = loaded.rows;
      } else if (filter?.countPlain) {
        const keyed = this.bisect && loaded.rowOrder === ROW_ORDER.protoDstPort;
        const plain = ref.file.plainColumns(ref.block, keyed ? this.filterKeyed : this.filterOnly, loaded);
        if (plain && keyed) counted = this.countKeyed(plain, loaded.rows, byName!);
        if (plain && counted === undefined) counted = filter.countPlain(plain, loaded.rows);
      }
      if (counted !== undefined) {
        stats.blocksRead++;
        stats.rowsRead += loaded.rows;
        batch.length = 0;
        return counted === 0 ? undefined : { batch, idx: this.idx, n: counted, ref };
      }
    }
    batch.length = 0;
    const some = verdict === 'some';
    // A block ordered by protocol and port: the ranges the filter may match, from those two
    // columns as stored (not decoded); the filter's columns are decoded only to test the
    // ranges it leaves undecided.
    let r: SortedRanges | undefined;
    if (some && this.bisect && this.gaveUp < GIVE_UPS && loaded.rowOrder === ROW_ORDER.protoDstPort) {
      const plain = ref.file.plainColumns(ref.block, KEY_COLUMNS, loaded);
      if (plain) r = this.keyedRanges(plain, loaded.rows, byName!);
    }
    let decodeFilter = true;
    if (r && whole) {
      decodeFilter = false;
      for (let k = 0; k < r.count; k++) if (!r.whole[k]) decodeFilter = true;
      // Not decoded, the filter's columns are still checked: a damaged one skips the block here
      // as it does where they are decoded (and in the count).
      if (!decodeFilter) ref.file.checkColumns(ref.block, this.filterBesideKeys, loaded);
    }
    ref.file.readBlock(
      ref.block,
      !some ? (whole ? this.inner : this.cut) : decodeFilter ? (whole ? this.filterOnly : this.filterCut) : [],
      batch,
      0,
      loaded,
    );
    stats.blocksRead++;
    const rows = batch.length;
    if (this.idx.length < rows) this.idx = new Uint32Array(rows);
    const idx = this.idx;
    let n: number;
    if (verdict === 'all') n = takeRange(idx, 0, 0, rows);
    else if (r) {
      n = 0;
      for (let k = 0; k < r.count; k++) {
        const from = r.from[k]!;
        const to = r.to[k]!;
        if (r.whole[k]) n = takeRange(idx, n, from, to);
        else n += filter!.select(batch, from, to, idx.subarray(n));
      }
    } else {
      n = filter!.select(batch, 0, rows, idx);
    }
    if (!whole) n = keepInWindow(batch, idx, n, this.from, this.to);
    stats.rowsRead += rows;
    if (n === 0) return undefined;
    // The caller's columns not decoded yet: those besides the filter's, or all of them.
    const restRead = decodeFilter ? this.rest : this.callerColumns;
    if (!some || restRead.length === 0) return { batch, idx, n, ref };
    if (n * 4 >= rows) {
      ref.file.readBlock(ref.block, restRead, batch, 0, loaded);
      return { batch, idx, n, ref };
    }
    // Few rows matched: decode the caller's columns of those rows only, into rows 0 … n.
    const picked = this.picked;
    picked.length = 0;
    picked.reserve(n);
    ref.file.readBlockRows(ref.block, idx.subarray(0, n), this.callerColumns, picked, 0, loaded);
    picked.length = n;
    if (this.identity.length < n)
      this.identity = Uint32Array.from({ length: Math.max(n, this.identity.length * 2) }, (_, i) => i);
    return { batch: picked, idx: this.identity, n, ref };
  }
}

/** Appends rows [from, to) to idx from position n; answers the new count. */
function takeRange(idx: Uint32Array, n: number, from: number, to: number): number {
  for (let i = from; i < to; i++) idx[n++] = i;
  return n;
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
