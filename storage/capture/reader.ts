/**
 * Reads capture files: lists a source's hours, opens sealed and open files,
 * skips blocks by their index, decodes only the columns asked for, and finds
 * the newest flows of a window by walking blocks newest first.
 *
 * Damage is expected, not exceptional: a file that cannot be opened or a
 * block whose checksum fails is counted in ReadStats, passed to `onError`,
 * and skipped; the rest of the data is still returned.
 */
import { join } from 'node:path';
import { FlowBatch } from '../../common/flow-batch.js';
import { CaptureFile, type LoadedBlock } from './capture-file.js';
import { nodeFs, type CaptureFs } from './capture-fs.js';
import { CodecSet } from './codec.js';
import { ALL_COLUMNS, CaptureFileError, withDependencies, type ColumnName } from './format.js';
import { hourEndOf, parseCaptureName, sourceDir } from './file-names.js';

/** One capture file of a source. */
export interface CaptureFileInfo {
  path: string;
  name: string;
  source: string;
  /** Hour start and end (exclusive), ms since epoch. */
  hourStart: number;
  hourEnd: number;
  /** `sealed` files are complete; `current` is the open hour being written. */
  kind: 'sealed' | 'current';
  size: number;
}

/** Lists a source's capture files, oldest hour first; a sealed file wins over a stale open one of the same hour. */
export function listCaptureFiles(dataDir: string, source: string, zone: string, cfs: CaptureFs = nodeFs): CaptureFileInfo[] {
  const dir = sourceDir(dataDir, source);
  let names: string[];
  try {
    names = cfs.readdirSync(dir);
  } catch {
    return [];
  }
  const byHour = new Map<number, CaptureFileInfo>();
  for (const name of names) {
    const parsed = parseCaptureName(name, zone);
    if (!parsed || parsed.kind === 'sealing') continue;
    const path = join(dir, name);
    let size: number;
    try {
      size = cfs.statSync(path).size;
    } catch {
      continue; // removed between readdir and stat (retention, rename at seal)
    }
    const info: CaptureFileInfo = {
      path,
      name,
      source,
      hourStart: parsed.hourStart,
      hourEnd: hourEndOf(parsed.hourStart),
      kind: parsed.kind,
      size,
    };
    const prev = byHour.get(parsed.hourStart);
    if (!prev || (prev.kind === 'current' && info.kind === 'sealed')) byHour.set(parsed.hourStart, info);
  }
  return [...byHour.values()].sort((a, b) => a.hourStart - b.hourStart);
}

/** Counters of what reading met; pass one object to many calls to add up. */
export interface ReadStats {
  filesOpened: number;
  blocksRead: number;
  blocksSkipped: number;
  rowsRead: number;
  corruptFiles: number;
  corruptBlocks: number;
}

/** Fresh zeroed counters. */
export function newReadStats(): ReadStats {
  return { filesOpened: 0, blocksRead: 0, blocksSkipped: 0, rowsRead: 0, corruptFiles: 0, corruptBlocks: 0 };
}

/** A time window on received time, ms since epoch, `[from, to)`; either side open when omitted. */
export interface Window {
  from?: number;
  to?: number;
}

/** Options shared by the scan helpers. */
export interface ScanOptions extends Window {
  /** Columns to decode; default all. `received` and `start` are always decoded. */
  columns?: readonly ColumnName[];
  stats?: ReadStats;
  /** Called for every damaged file or block that was skipped. */
  onError?: (err: CaptureFileError) => void;
  cfs?: CaptureFs;
}

function overlaps(b: { receivedMin: number; receivedMax: number }, w: Window): boolean {
  return (w.from === undefined || b.receivedMax >= w.from) && (w.to === undefined || b.receivedMin < w.to);
}

function openForScan(
  file: string | CaptureFileInfo,
  opts: ScanOptions,
  stats: ReadStats,
  codecs: CodecSet,
): CaptureFile | undefined {
  const path = typeof file === 'string' ? file : file.path;
  const requireSealed = typeof file !== 'string' && file.kind === 'sealed';
  try {
    const f = CaptureFile.open(path, { requireSealed, cfs: opts.cfs, codecs });
    stats.filesOpened++;
    return f;
  } catch (err) {
    if (!(err instanceof CaptureFileError)) throw err;
    // An open file renamed away by its seal between listing and opening is not damage.
    if (err.code === 'io' && typeof file !== 'string' && file.kind === 'current') return undefined;
    stats.corruptFiles++;
    opts.onError?.(err);
    return undefined;
  }
}

/** Keeps rows of `batch` whose received time is in the window, in order; returns the kept count. */
function filterWindow(batch: FlowBatch, w: Window, wanted: ReadonlySet<ColumnName>): number {
  const rec = batch.cols.received;
  const from = w.from ?? -Infinity;
  const to = w.to ?? Infinity;
  let k = 0;
  const n = batch.length;
  let all = true;
  for (let i = 0; i < n; i++) if (!(rec[i]! >= from && rec[i]! < to)) all = false;
  if (all) return n;
  for (let i = 0; i < n; i++) {
    const r = rec[i]!;
    if (!(r >= from && r < to)) continue;
    if (k !== i) copyRow(batch, i, batch, k, wanted);
    k++;
  }
  batch.length = k;
  return k;
}

function copyRow(src: FlowBatch, i: number, dst: FlowBatch, j: number, wanted: ReadonlySet<ColumnName>): void {
  for (const name of wanted) {
    if (name === 'srcAddr' || name === 'dstAddr' || name === 'nextHop' || name === 'exporter') {
      dst[name].set(src[name].subarray(i * 16, i * 16 + 16), j * 16);
    } else {
      dst.cols[name][j] = src.cols[name][i]!;
    }
  }
}

/**
 * Yields the rows of `files` in the window, one batch per block, in file
 * order. Blocks outside the window are skipped by their index.
 */
export function* scanFlows(files: readonly (string | CaptureFileInfo)[], opts: ScanOptions = {}): Generator<FlowBatch> {
  const stats = opts.stats ?? newReadStats();
  const codecs = new CodecSet();
  const wanted = withDependencies([...(opts.columns ?? ALL_COLUMNS), 'received', 'start']);
  const list = [...wanted];
  for (const file of files) {
    if (typeof file !== 'string' && !overlaps({ receivedMin: file.hourStart, receivedMax: file.hourEnd }, opts)) continue;
    const f = openForScan(file, opts, stats, codecs);
    if (!f) continue;
    try {
      for (let i = 0; i < f.blocks.length; i++) {
        if (!overlaps(f.blocks[i]!, opts)) {
          stats.blocksSkipped++;
          continue;
        }
        let batch: FlowBatch;
        try {
          batch = f.readBlock(i, list);
        } catch (err) {
          if (!(err instanceof CaptureFileError)) throw err;
          stats.corruptBlocks++;
          opts.onError?.(err);
          continue;
        }
        stats.blocksRead++;
        if (filterWindow(batch, opts, wanted) > 0) {
          stats.rowsRead += batch.length;
          yield batch;
        }
      }
    } finally {
      f.close();
    }
  }
}

/**
 * The newest `limit` flows of the window, ordered by flow start descending,
 * then received time descending (the order of the netflow `flows` answer).
 * Blocks are visited by their newest start; the walk stops as soon as no
 * remaining block can hold a flow newer than the ones kept, so a 10 M-flow
 * hour costs one or two blocks.
 */
export function newestFlows(files: readonly (string | CaptureFileInfo)[], opts: ScanOptions & { limit: number }): FlowBatch {
  const stats = opts.stats ?? newReadStats();
  const codecs = new CodecSet();
  const limit = Math.max(0, Math.floor(opts.limit));
  const wanted = [...withDependencies([...(opts.columns ?? ALL_COLUMNS), 'received', 'start'])];
  const opened: CaptureFile[] = [];
  const candidates: { file: CaptureFile; block: number; startMax: number; order: number }[] = [];
  let order = 0;
  try {
    for (const file of files) {
      if (typeof file !== 'string' && !overlaps({ receivedMin: file.hourStart, receivedMax: file.hourEnd }, opts)) continue;
      const f = openForScan(file, opts, stats, codecs);
      if (!f) continue;
      opened.push(f);
      f.blocks.forEach((b, i) => {
        if (overlaps(b, opts)) candidates.push({ file: f, block: i, startMax: b.startMax, order: order++ });
        else stats.blocksSkipped++;
      });
    }
    candidates.sort((a, b) => b.startMax - a.startMax || b.order - a.order);
    // Pass 1 decodes received and start only; pass 2 gathers the other columns of the rows kept.
    type Kept = {
      cand: (typeof candidates)[number];
      loaded: LoadedBlock;
      row: number;
      start: number;
      received: number;
      order: number;
    };
    let kept: Kept[] = [];
    const cmp = (a: Kept, b: Kept): number => b.start - a.start || b.received - a.received || b.order - a.order;
    for (const c of candidates) {
      if (limit === 0) break;
      const worst = kept.length === limit ? kept[limit - 1] : undefined;
      if (worst && c.startMax < worst.start) {
        stats.blocksSkipped++;
        continue;
      }
      let batch: FlowBatch;
      let loaded: LoadedBlock;
      try {
        loaded = c.file.loadBlock(c.block);
        batch = c.file.readBlock(c.block, ['received', 'start'], undefined, 0, loaded);
      } catch (err) {
        if (!(err instanceof CaptureFileError)) throw err;
        stats.corruptBlocks++;
        opts.onError?.(err);
        continue;
      }
      stats.blocksRead++;
      const from = opts.from ?? -Infinity;
      const to = opts.to ?? Infinity;
      const rec = batch.cols.received;
      const st = batch.cols.start;
      // Rows newest-received first, so the bar rises at once and older rows fail it without an
      // object or a sort each; the list is cut back to `limit` whenever it doubles.
      let bar = kept.length === limit ? kept[limit - 1]!.start : -Infinity;
      for (let i = batch.length - 1; i >= 0; i--) {
        const r = rec[i]!;
        if (!(r >= from && r < to)) continue;
        const s = st[i]!;
        if (s < bar) continue;
        stats.rowsRead++;
        kept.push({ cand: c, loaded, row: i, start: s, received: r, order: c.order * 1e7 + i });
        if (kept.length >= 2 * limit) {
          kept = kept.sort(cmp).slice(0, limit);
          bar = kept[limit - 1]!.start;
        }
      }
      kept = kept.sort(cmp).slice(0, limit);
    }
    // Gather each contributing block's rows (ascending within the block), then place them in order.
    const byBlock = new Map<Kept['cand'], Kept[]>();
    for (const k of kept) {
      const list = byBlock.get(k.cand);
      if (list) list.push(k);
      else byBlock.set(k.cand, [k]);
    }
    const out = new FlowBatch(Math.max(1, kept.length));
    out.length = kept.length;
    const position = new Map<Kept, number>(kept.map((k, i) => [k, i]));
    const wantedSet = new Set(wanted);
    const lost = new Set<number>();
    for (const [cand, list] of byBlock) {
      list.sort((a, b) => a.row - b.row);
      const tmp = new FlowBatch(list.length);
      try {
        cand.file.readBlockRows(
          cand.block,
          list.map((k) => k.row),
          wanted,
          tmp,
          0,
          list[0]!.loaded,
        );
      } catch (err) {
        if (!(err instanceof CaptureFileError)) throw err;
        // a column other than the times is damaged: those rows cannot be shown
        stats.corruptBlocks++;
        opts.onError?.(err);
        for (const k of list) lost.add(position.get(k)!);
        continue;
      }
      list.forEach((k, j) => copyRow(tmp, j, out, position.get(k)!, wantedSet));
    }
    if (lost.size === 0) return out;
    const kept2 = new FlowBatch(Math.max(1, out.length - lost.size));
    for (let i = 0; i < out.length; i++) if (!lost.has(i)) copyRow(out, i, kept2, kept2.addRow(), wantedSet);
    return kept2;
  } finally {
    for (const f of opened) f.close();
  }
}
