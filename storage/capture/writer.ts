/**
 * The capture writer: the collector's sink for FlowBatches, one file per
 * flow source per hour (see format.ts for the layout).
 *
 * Rows go to the hour of their received time. Each open hour buffers rows
 * and appends them as one data block when `flushIntervalMs` has passed or
 * `blockRows` rows are waiting, so a reader sees flows at most one flush
 * interval old, and a kill -9 loses at most that much. When the clock passes
 * the end of an hour (plus a grace period for rows still in flight) the hour
 * is sealed: its small live blocks are merged into large ones in a compacted
 * copy (smaller file, coarser index), the footer is written, the copy is
 * fsynced and renamed to `nfcapd.YYYYMMDDHHmm`, and `hourSealed` listeners
 * run. At start, files left open by a crash are recovered: blocks are
 * checked, a torn tail is cut off and counted, and the hour is continued or
 * sealed. A write error (disk full, I/O) is logged and counted, the rows of
 * that block are dropped, and the file is cut back to its last good block so
 * nothing already written is damaged; `write()` never throws for I/O.
 */
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { ADDRESS_COLUMNS, FlowBatch, NUMERIC_COLUMNS } from '../../common/flow-batch.js';
import { warmUpEncoding } from './warm-up.js';
import { accumulateTotals, FlowAggregates, type FlowAggregatesView } from './aggregate.js';
import { encodeBlock } from './block-codec.js';
import { fsyncDir, nodeFs, type CaptureFs } from './capture-fs.js';
import { CodecSet, createCodec, type ByteCodec, type CodecName } from './codec.js';
import {
  BLOCK,
  BLOCK_HEADER_SIZE,
  blockLocation,
  CaptureFileError,
  checksum,
  decodeBlockHeader,
  decodeBlockMeta,
  decodeHeader,
  emptyTotals,
  encodeFooter,
  encodeHeader,
  encodeTrailer,
  frameBlock,
  INTERVAL_SEC,
  TRAILER_SIZE,
  type BlockLocation,
  type FileTotals,
} from './format.js';
import { currentName, hourEndOf, hourStartOf, parseCaptureName, sealedName, sealingName, sourceDir } from './file-names.js';
import { CaptureFile } from './capture-file.js';
import type { Log } from '../../common/log.js';
import { LogThrottle } from '../../common/log-throttle.js';

/** Anything that takes the collector's batches. */
export interface FlowSink {
  /** Takes rows of `batch` (copied; the caller may reuse the batch). */
  write(source: string, batch: FlowBatch): void;
}

/** What `hourSealed` listeners receive. */
export interface HourSealedEvent {
  source: string;
  hourStart: number;
  hourEnd: number;
  path: string;
  flows: number;
}

/** Options of the capture writer. */
export interface CaptureWriterOptions {
  dataDir: string;
  timezone: string;
  flushIntervalMs?: number;
  blockRows?: number;
  codec?: CodecName;
  level?: number;
  fsyncOnFlush?: boolean;
  /** How long after its end an hour stays open for rows still in flight; default 2 flush intervals. */
  sealGraceMs?: number;
  now?: () => number;
  cfs?: CaptureFs;
  log?: Log;
  /** Run the flush/seal timer (default true); tests call `tick()` with a fake clock instead. */
  timer?: boolean;
  /** Encode and aggregate a synthetic block at start (warm-up.ts), so the first real blocks run optimised code (default false; serve sets it). */
  warmUp?: boolean;
  /** Keep the open hour's aggregates (default true); an offline import that only seals hours can skip them. */
  aggregates?: boolean;
  /**
   * Written rows that may wait for the aggregates (default 4 blocks). The
   * timer adds waiting rows for a bounded time per tick; beyond this many,
   * each flush of an hour not yet over also adds as many rows as it wrote,
   * so the wait (and the memory it holds) stops growing at any rate.
   */
  maxAggregationBacklogRows?: number;
}

/** Counters of the writer ("everything that moves gets a counter"). */
export interface WriterCounters {
  rowsReceived: number;
  rowsWritten: number;
  blocksWritten: number;
  bytesWritten: number;
  writeErrors: number;
  rowsLost: number;
  hoursOpened: number;
  hoursSealed: number;
  hoursReopened: number;
  sealErrors: number;
  recoveredFiles: number;
  recoveredDroppedBlocks: number;
  recoveredDroppedBytes: number;
  damagedFilesMovedAside: number;
}

interface OpenHour {
  source: string;
  hourStart: number;
  hourEnd: number;
  path: string;
  /** -1 while the file could not be opened (retried at the next flush). */
  fd: number;
  /** Where the next block goes: just after the last good block. */
  offset: number;
  headerSize: number;
  blocks: BlockLocation[];
  totals: FileTotals;
  aggregates: FlowAggregates;
  /** Rows already in the file but not yet added to `aggregates` (see catchUp). */
  aggQueue: AggSegment[];
  /** Rows in `aggQueue`. */
  aggQueuedRows: number;
  pending: FlowBatch;
  lastFlush: number;
  /**
   * Blocks a restart found in the file and has not yet added to `totals` and
   * `aggregates` (see recoverStep); undefined once they all are.
   */
  recovery: RecoveryPass | undefined;
  sealing: boolean;
  /** Do not retry sealing before this time (after a failed seal). */
  sealRetryAt: number;
}

const LOG_EVERY_MS = 10_000;

/** The blocks of a recovered file still to be read back, one at a time, in the background. */
interface RecoveryPass {
  file: CaptureFile;
  next: number;
  startedMs: number;
}

/** The columns accumulateTotals reads: all a recovery without aggregates decodes. */
const TOTALS_COLUMNS = ['received', 'start', 'end', 'bytes', 'packets', 'proto', 'tcpFlags'] as const;

/** Longest stretch the background recovery holds the event loop before it yields. */
const RECOVERY_SLICE_MS = 10;

/** Rows [from, from+rows) of a batch waiting for the aggregates; `last` when no later segment uses the batch (it can be reused). */
interface AggSegment {
  batch: FlowBatch;
  from: number;
  rows: number;
  last: boolean;
}

// Emptied pending batches kept for reuse (per writer), at most this many.
const SPARE_BATCHES = 2;

/** Copies rows [from, from+n) of `src` onto the end of `dst`. */
export function appendRows(dst: FlowBatch, src: FlowBatch, from: number, n: number): void {
  dst.reserve(n);
  const at = dst.length;
  for (const name of NUMERIC_COLUMNS) {
    (dst.cols[name] as Float64Array).set((src.cols[name] as Float64Array).subarray(from, from + n), at);
  }
  for (const name of ADDRESS_COLUMNS) dst[name].set(src[name].subarray(from * 16, (from + n) * 16), at * 16);
  dst.length = at + n;
}

/** Removes the first `n` rows of a batch, moving the rest to the front. */
function dropFront(b: FlowBatch, n: number): void {
  const rest = b.length - n;
  if (rest > 0) {
    for (const name of NUMERIC_COLUMNS) b.cols[name].copyWithin(0, n, b.length);
    for (const name of ADDRESS_COLUMNS) b[name].copyWithin(0, n * 16, b.length * 16);
  }
  b.length = Math.max(0, rest);
}

/** Counters of a writer that has done nothing yet. */
export function newWriterCounters(): WriterCounters {
  return {
    rowsReceived: 0,
    rowsWritten: 0,
    blocksWritten: 0,
    bytesWritten: 0,
    writeErrors: 0,
    rowsLost: 0,
    hoursOpened: 0,
    hoursSealed: 0,
    hoursReopened: 0,
    sealErrors: 0,
    recoveredFiles: 0,
    recoveredDroppedBlocks: 0,
    recoveredDroppedBytes: 0,
    damagedFilesMovedAside: 0,
  };
}

/** Writes flow sources' hourly capture files; see the module comment. */
export class CaptureWriter implements FlowSink {
  readonly counters: WriterCounters = newWriterCounters();
  private readonly hours = new Map<string, OpenHour>();
  private readonly lastHour = new Map<string, OpenHour>();
  /** Pending batches the aggregates are done with, reused as the next pending batch of any hour. */
  private readonly spare: FlowBatch[] = [];
  private readonly listeners: Array<(e: HourSealedEvent) => void | Promise<void>> = [];
  private readonly codec: ByteCodec;
  private readonly codecs = new CodecSet();
  private readonly cfs: CaptureFs;
  private readonly now: () => number;
  private readonly flushIntervalMs: number;
  private readonly blockRows: number;
  private readonly graceMs: number;
  private readonly maxAggBacklogRows: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly seals = new Set<Promise<void>>();
  private recoveryScheduled = false;
  private readonly recoveryWaiters: Array<() => void> = [];
  private readonly logThrottle: LogThrottle;
  private closed = false;

  constructor(private readonly opts: CaptureWriterOptions) {
    this.cfs = opts.cfs ?? nodeFs;
    this.now = opts.now ?? Date.now;
    this.logThrottle = new LogThrottle(LOG_EVERY_MS, this.now);
    this.flushIntervalMs = opts.flushIntervalMs ?? 5000;
    this.blockRows = opts.blockRows ?? 65_536;
    this.graceMs = opts.sealGraceMs ?? 2 * this.flushIntervalMs;
    this.maxAggBacklogRows = Math.max(0, opts.maxAggregationBacklogRows ?? 4 * this.blockRows);
    this.codec = createCodec(opts.codec ?? 'zstd', opts.level ?? 3);
  }

  /** Registers a listener for sealed hours (the KPI cache aggregates them); returns an unsubscribe function. */
  onHourSealed(fn: (e: HourSealedEvent) => void | Promise<void>): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Recovers files a crash left open, then starts the flush/seal timer. */
  async start(): Promise<void> {
    if (this.opts.warmUp) {
      warmUpEncoding(this.codec, this.now());
      // The first hour's file name: luxon works out the system locale and the zone's
      // formatter once, ≈ 40 ms that would otherwise fall on the first real block.
      currentName(hourStartOf(this.now(), this.opts.timezone), this.opts.timezone);
    }
    this.recoverAll();
    await this.tick();
    if (this.opts.timer !== false) {
      const every = Math.max(50, Math.min(1000, Math.floor(this.flushIntervalMs / 5)));
      this.timer = setInterval(() => void this.tick(), every);
      this.timer.unref();
    }
  }

  /** Takes rows; routes each to the hour of its received time. Never throws for I/O problems. */
  write(source: string, batch: FlowBatch): void {
    if (this.closed) throw new Error('capture writer is closed');
    const n = batch.length;
    this.counters.rowsReceived += n;
    const rec = batch.cols.received;
    let i = 0;
    while (i < n) {
      const h = this.hourAt(source, rec[i]!);
      // A run of rows of the same hour is copied column by column, at most up to a whole
      // block at a time: the pending batch then never outgrows one block, and goes whole
      // to the aggregation queue when it is flushed (see flushHour).
      let j = i + 1;
      while (j < n && rec[j]! >= h.hourStart && rec[j]! < h.hourEnd) j++;
      while (i < j) {
        const room = this.blockRows - h.pending.length;
        const take = h.sealing || room <= 0 ? j - i : Math.min(j - i, room);
        appendRows(h.pending, batch, i, take);
        i += take;
        if (!h.sealing && h.pending.length >= this.blockRows) this.flushHour(h, true);
      }
    }
  }

  /**
   * Takes a batch the caller gives up (see FlowSink.take). When all its rows
   * fall in one hour that has nothing pending, the batch itself becomes that
   * hour's pending rows, and a batch of (nearly) a whole block is written
   * from where it lies: at high rates the listener's batches are blocks, and copying
   * every row once more was a sixth of the writer's time. Otherwise as `write`.
   */
  take(source: string, batch: FlowBatch): void {
    if (this.adopt(source, batch)) return;
    this.write(source, batch);
    this.retire(batch); // copied: its arrays can be filled again
  }

  /** The `take` of a batch that becomes an hour's pending rows as it is; false when it has to be copied. */
  private adopt(source: string, batch: FlowBatch): boolean {
    const n = batch.length;
    if (this.closed || n === 0) return false;
    const rec = batch.cols.received;
    let lo = rec[0]!;
    let hi = lo;
    for (let i = 1; i < n; i++) {
      const r = rec[i]!;
      if (r < lo) lo = r;
      else if (r > hi) hi = r;
    }
    const h = this.hourAt(source, lo);
    // Nearly a block (the listener sends batches a datagram short of one) is written as it is;
    // rows still pending before it go first, as a block of their own.
    const nearBlock = n >= this.blockRows - (this.blockRows >> 3);
    if (hi >= h.hourEnd || h.sealing || batch.capacity < this.blockRows) return false;
    if (h.pending.length > 0) {
      if (!nearBlock) return false;
      this.flushHour(h);
      if (h.pending.length > 0) return false; // the file could not take them
    }
    this.counters.rowsReceived += n;
    this.retire(h.pending);
    h.pending = batch;
    if (nearBlock) this.flushHour(h);
    return true;
  }

  /** Flushes hours whose interval has passed and seals hours that are over; the timer calls it. */
  async tick(): Promise<void> {
    const now = this.now();
    for (const h of [...this.hours.values()]) {
      if (h.sealing) continue;
      // Bounded so one tick never holds the event loop (and the collector) for long.
      this.catchUp(h, 20);
      if (now >= h.hourEnd + this.graceMs && now >= h.sealRetryAt) {
        this.startSeal(h);
      } else if (h.pending.length > 0 && now - h.lastFlush >= this.flushIntervalMs) {
        this.flushHour(h);
      }
    }
    await this.settled();
  }

  /** Writes every buffered row now. */
  flush(): void {
    for (const h of this.hours.values()) if (!h.sealing) this.flushHour(h);
  }

  /** Resolves when no seal is running. */
  async settled(): Promise<void> {
    while (this.seals.size > 0) await Promise.all([...this.seals]);
  }

  /**
   * Flushes everything and stops. Hours that are over are sealed; with
   * `sealAll` (offline import) every open hour is sealed.
   */
  async close(options: { sealAll?: boolean } = {}): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.settled();
    const now = this.now();
    for (const h of [...this.hours.values()]) {
      if (options.sealAll || now >= h.hourEnd + this.graceMs) this.startSeal(h);
    }
    await this.settled();
    for (const h of [...this.hours.values()]) {
      this.flushHour(h);
      this.closeFd(h);
      h.recovery?.file.close();
      h.recovery = undefined;
      this.hours.delete(this.key(h.source, h.hourStart));
    }
    this.wakeRecoveryWaiters();
    this.lastHour.clear();
    this.closed = true;
  }

  /**
   * Aggregates of a source's newest open hour: exactly what its file holds so
   * far (rows still buffered for the next flush are not in them); empty with
   * `aggregates: false`.
   */
  openHourAggregates(source: string): { hourStart: number; hourEnd: number; aggregates: FlowAggregatesView } | undefined {
    let best: OpenHour | undefined;
    for (const h of this.hours.values()) if (h.source === source && (!best || h.hourStart > best.hourStart)) best = h;
    if (!best || best.recovery) return undefined;
    this.catchUp(best, Infinity);
    return { hourStart: best.hourStart, hourEnd: best.hourEnd, aggregates: best.aggregates };
  }

  /**
   * Aggregates of one open hour of a source (as openHourAggregates), if that
   * hour is open and whole: undefined while a restart is still reading its
   * file back, so the caller answers from the file.
   */
  aggregatesFor(source: string, hourStart: number): FlowAggregatesView | undefined {
    const h = this.hours.get(this.key(source, hourStart));
    if (!h || h.recovery) return undefined;
    this.catchUp(h, Infinity);
    return h.aggregates;
  }

  /**
   * A batch the writer is done with: given back to whoever lent it (FlowBatch.release, the
   * threaded listeners' decode thread fills it again), else kept as a spare pending batch.
   */
  private retire(b: FlowBatch): void {
    const release = b.release;
    if (release) {
      b.release = undefined;
      release();
    } else if (this.spare.length < SPARE_BATCHES && b.capacity >= this.blockRows) {
      this.spare.push(b);
    }
  }

  /** Queues rows already in the file for the hour's aggregates (see catchUp). */
  private queueForAggregates(h: OpenHour, seg: AggSegment): void {
    h.aggQueue.push(seg);
    h.aggQueuedRows += seg.rows;
  }

  /** Resolves when every recovered file has been read back into its hour's totals and aggregates. */
  recovered(): Promise<void> {
    if (!this.recovering()) return Promise.resolve();
    return new Promise((resolve) => this.recoveryWaiters.push(resolve));
  }

  /** True while some hour still has recovered blocks to read back. */
  private recovering(): boolean {
    for (const h of this.hours.values()) if (h.recovery) return true;
    return false;
  }

  /** Answers recovered() callers once no hour has blocks left to read back. */
  private wakeRecoveryWaiters(): void {
    if (!this.recovering()) for (const w of this.recoveryWaiters.splice(0)) w();
  }

  /** Runs the background recovery in slices, yielding to the event loop between them. */
  private scheduleRecovery(): void {
    if (this.recoveryScheduled || this.closed) return;
    this.recoveryScheduled = true;
    setImmediate(() => {
      this.recoveryScheduled = false;
      if (this.closed) return;
      let left = false;
      for (const h of this.hours.values()) {
        if (h.recovery && !h.sealing) left = !this.recoverStep(h, RECOVERY_SLICE_MS) || left;
      }
      if (left) this.scheduleRecovery();
      else this.wakeRecoveryWaiters();
    });
  }

  /**
   * Reads recovered blocks of an hour back into its totals (and aggregates) for
   * at most `budgetMs`, one block at a time; true when none is left.
   */
  private recoverStep(h: OpenHour, budgetMs: number, aggregates = this.opts.aggregates !== false): boolean {
    const r = h.recovery;
    if (!r) return true;
    const until = performance.now() + budgetMs;
    while (r.next < r.file.blocks.length) {
      const i = r.next++;
      try {
        const b = r.file.readBlock(i, aggregates ? FlowAggregates.COLUMNS : TOTALS_COLUMNS);
        accumulateTotals(h.totals, b);
        if (aggregates) h.aggregates.add(b, 0, b.length);
      } catch (err) {
        // Whole when the file was checked at start; damaged since (the disk): its rows are not counted.
        this.counters.recoveredDroppedBlocks++;
        this.opts.log?.error(
          { err, path: h.path, block: i },
          'recovered block could not be read back; its flows are not in the open hour figures',
        );
      }
      if (performance.now() >= until) break;
    }
    if (r.next < r.file.blocks.length) return false;
    r.file.close();
    h.recovery = undefined;
    this.opts.log?.info(
      { path: h.path, flows: h.totals.all.flows, ms: Math.round(performance.now() - r.startedMs) },
      'open hour read back after the restart',
    );
    return true;
  }

  /** Finishes an hour's recovery (totals only: a sealing hour keeps no aggregates), yielding between slices. */
  private async finishRecovery(h: OpenHour): Promise<void> {
    while (!this.recoverStep(h, RECOVERY_SLICE_MS, false)) await yieldToLoop();
    this.wakeRecoveryWaiters();
  }

  /** Adds queued flushed rows to an hour's aggregates, for at most `budgetMs`. */
  private catchUp(h: OpenHour, budgetMs: number): void {
    const until = performance.now() + budgetMs;
    while (h.aggQueue.length > 0) {
      const seg = h.aggQueue.shift()!;
      h.aggQueuedRows -= seg.rows;
      h.aggregates.add(seg.batch, seg.from, seg.rows);
      if (seg.last) this.retire(seg.batch);
      if (performance.now() >= until) break;
    }
  }

  /** Open hours (source, hour start, file path, rows written, buffered and not yet aggregated), for status output. */
  openHours(): Array<{
    source: string;
    hourStart: number;
    path: string;
    rows: number;
    pending: number;
    aggregationBacklog: number;
  }> {
    return [...this.hours.values()].map((h) => ({
      source: h.source,
      hourStart: h.hourStart,
      path: h.path,
      rows: h.totals.all.flows,
      pending: h.pending.length,
      aggregationBacklog: h.aggQueuedRows,
    }));
  }

  // ------------------------------------------------------------------ hours

  private key(source: string, hourStart: number): string {
    return `${source}\u0000${hourStart}`;
  }

  private dir(source: string): string {
    return sourceDir(this.opts.dataDir, source);
  }

  private rateLimited(kind: string, fn: () => void): void {
    if (this.logThrottle.allow(kind)) fn();
  }

  private newHour(source: string, hourStart: number): OpenHour {
    return {
      source,
      hourStart,
      hourEnd: hourEndOf(hourStart),
      path: join(this.dir(source), currentName(hourStart, this.opts.timezone)),
      fd: -1,
      offset: 0,
      headerSize: 0,
      blocks: [],
      totals: emptyTotals(),
      aggregates: new FlowAggregates(),
      aggQueue: [],
      aggQueuedRows: 0,
      pending: new FlowBatch(1024),
      lastFlush: this.now(),
      recovery: undefined,
      sealing: false,
      sealRetryAt: 0,
    };
  }

  /** The open hour of a received time: the source's last one when it fits, else found or opened (and remembered). */
  private hourAt(source: string, received: number): OpenHour {
    const last = this.lastHour.get(source);
    if (last && !(received < last.hourStart || received >= last.hourEnd)) return last;
    const h = this.hourFor(source, received);
    this.lastHour.set(source, h);
    return h;
  }

  private hourFor(source: string, received: number): OpenHour {
    const hourStart = hourStartOf(received, this.opts.timezone);
    const k = this.key(source, hourStart);
    const existing = this.hours.get(k);
    if (existing) return existing;
    const h = this.newHour(source, hourStart);
    this.hours.set(k, h);
    const sealedPath = join(this.dir(source), sealedName(hourStart, this.opts.timezone));
    if (this.cfs.existsSync(sealedPath)) this.reopen(h, sealedPath);
    else this.createFile(h);
    return h;
  }

  /** The file header of hour `h`, created now (the open file's and, at compaction, the sealed file's). */
  private headerOf(h: OpenHour): Buffer {
    return encodeHeader({
      hourStart: h.hourStart,
      intervalSec: INTERVAL_SEC,
      codec: this.codec.id,
      source: h.source,
      createdAt: this.now(),
    });
  }

  private createFile(h: OpenHour): void {
    try {
      this.cfs.mkdirSync(this.dir(h.source), { recursive: true });
      if (this.cfs.existsSync(h.path)) {
        // Left by a crash and not recovered at start (start() not called): continue it safely.
        this.recoverFile(h.source, h.path, h);
        return;
      }
      const header = this.headerOf(h);
      const fd = this.cfs.openSync(h.path, 'w+');
      h.fd = fd;
      this.writeAll(fd, header, 0);
      h.headerSize = header.length;
      h.offset = header.length;
      this.counters.hoursOpened++;
    } catch (err) {
      this.counters.writeErrors++;
      this.closeFd(h);
      h.offset = 0;
      this.rateLimited('open', () =>
        this.opts.log?.error({ err, path: h.path }, 'capture file cannot be created; rows of this hour are dropped until it can'),
      );
    }
  }

  /** Turns a sealed hour back into an open one, for rows that arrive after it was sealed. */
  private reopen(h: OpenHour, sealedPath: string): void {
    try {
      const f = CaptureFile.open(sealedPath, { requireSealed: true, cfs: this.cfs, codecs: this.codecs });
      const dataEnd = f.dataEnd;
      f.close();
      // Rename first: a crash between the two steps leaves an open file with a footer, which recovery cuts.
      this.cfs.renameSync(sealedPath, h.path);
      this.counters.hoursReopened++;
      this.recoverFile(h.source, h.path, h, dataEnd);
    } catch (err) {
      this.counters.writeErrors++;
      this.rateLimited('reopen', () =>
        this.opts.log?.error({ err, path: sealedPath }, 'sealed hour cannot be reopened for late rows; they are dropped'),
      );
    }
  }

  private closeFd(h: OpenHour): void {
    if (h.fd >= 0) {
      try {
        this.cfs.closeSync(h.fd);
      } catch {
        // nothing more to do for a descriptor that will not close
      }
    }
    h.fd = -1;
  }

  private writeAll(fd: number, buf: Uint8Array, pos: number): void {
    let done = 0;
    while (done < buf.length) {
      const n = this.cfs.writeSync(fd, buf, done, buf.length - done, pos + done);
      if (n <= 0) throw new Error('short write');
      done += n;
    }
  }

  /** Appends the pending rows of an hour as blocks; on error drops them (counted) and cuts the file back. */
  private flushHour(h: OpenHour, wholeBlocksOnly = false): void {
    const n = wholeBlocksOnly ? h.pending.length - (h.pending.length % this.blockRows) : h.pending.length;
    // A batch mostly full goes to the aggregation queue as it is (no copy; a fresh or reused
    // batch becomes the pending one); a few rows of a timed flush are copied out instead, so
    // the queue does not hold a whole block's arrays for them.
    const handOver = n * 4 >= h.pending.capacity;
    if (!wholeBlocksOnly) h.lastFlush = this.now();
    if (n === 0) return;
    if (h.fd < 0) this.createFile(h);
    if (h.fd < 0) {
      this.counters.rowsLost += n;
      dropFront(h.pending, n);
      return;
    }
    let lastSegment: AggSegment | undefined;
    for (let from = 0; from < n; from += this.blockRows) {
      const rows = Math.min(this.blockRows, n - from);
      const { block, index } = encodeBlock(h.pending, from, rows, this.codec);
      try {
        this.writeAll(h.fd, block, h.offset);
        if (this.opts.fsyncOnFlush) this.cfs.fsyncSync(h.fd);
      } catch (err) {
        this.counters.writeErrors++;
        this.counters.rowsLost += rows;
        try {
          // Cut a partly written block so the file ends on a good block again.
          this.cfs.ftruncateSync(h.fd, h.offset);
        } catch {
          // The next block is written at h.offset anyway, over whatever is there.
        }
        this.rateLimited('write', () =>
          this.opts.log?.error(
            { err, path: h.path, rows },
            'capture block write failed; its rows are dropped, earlier blocks are intact',
          ),
        );
        continue;
      }
      h.blocks.push(blockLocation(h.offset, block.length, index));
      h.offset += block.length;
      accumulateTotals(h.totals, h.pending, from, rows);
      if (this.opts.aggregates !== false) {
        // Per-key aggregation costs more than encoding: it runs off the write path (tick, or a query).
        // Handed over, the queue takes the rows where they are and the pending batch is replaced
        // below (allocating and copying 64 Ki rows per block cost about a tenth of the main thread at 120 000 datagrams/s).
        if (handOver) {
          lastSegment = { batch: h.pending, from, rows, last: false };
          this.queueForAggregates(h, lastSegment);
        } else {
          const copy = new FlowBatch(rows);
          appendRows(copy, h.pending, from, rows);
          this.queueForAggregates(h, { batch: copy, from: 0, rows, last: false });
        }
      }
      this.counters.rowsWritten += rows;
      this.counters.blocksWritten++;
      this.counters.bytesWritten += block.length;
    }
    if (!lastSegment) {
      dropFront(h.pending, n);
    } else {
      // The old batch now belongs to the aggregation queue; the rows after `n` move to a fresh (or reused) one.
      lastSegment.last = true;
      const old = h.pending;
      const next = this.spare.pop() ?? new FlowBatch(Math.max(this.blockRows, old.length - n));
      next.length = 0;
      appendRows(next, old, n, old.length - n);
      h.pending = next;
    }
    // The timer's catch-up is bounded in time; when rows come faster than it adds them, the
    // queue (and the batches it holds) would grow all hour. Past the bound, every flush pays
    // for as many rows as it wrote: a large backlog (a recovered or reopened file) then drains
    // at the pace of new rows instead of in one long stall. An hour that is over is left to
    // the timer and to sealing.
    if (this.now() >= h.hourEnd) return;
    let budget = n;
    while (budget > 0 && h.aggQueue.length > 0 && h.aggQueuedRows > this.maxAggBacklogRows) {
      budget -= h.aggQueue[0]!.rows;
      this.catchUp(h, 0);
    }
  }

  // ------------------------------------------------------------------ sealing

  private startSeal(h: OpenHour): void {
    if (h.sealing) return;
    this.flushHour(h);
    h.sealing = true;
    const p = this.seal(h).finally(() => this.seals.delete(p));
    this.seals.add(p);
  }

  private async seal(h: OpenHour): Promise<void> {
    const zone = this.opts.timezone;
    const dir = this.dir(h.source);
    const finalPath = join(dir, sealedName(h.hourStart, zone));
    let ok: boolean;
    try {
      // The footer's totals must count the blocks a restart found, too.
      if (h.recovery) await this.finishRecovery(h);
      if (h.blocks.length === 0) {
        // Nothing reached the file (or every write failed): no hour to seal, drop the empty file.
        this.closeFd(h);
        if (this.cfs.existsSync(h.path)) this.cfs.unlinkSync(h.path);
        ok = true;
      } else {
        await this.compactAndSeal(h, join(dir, sealingName(h.hourStart, zone)), finalPath);
        ok = true;
      }
    } catch (err) {
      this.counters.sealErrors++;
      this.opts.log?.error({ err, path: h.path }, 'sealing failed; the hour stays open and is retried in a minute');
      h.sealing = false;
      h.sealRetryAt = this.now() + 60_000;
      return;
    }
    this.hours.delete(this.key(h.source, h.hourStart));
    if (this.lastHour.get(h.source) === h) this.lastHour.delete(h.source);
    if (h.blocks.length > 0) {
      this.counters.hoursSealed++;
      const event: HourSealedEvent = {
        source: h.source,
        hourStart: h.hourStart,
        hourEnd: h.hourEnd,
        path: finalPath,
        flows: h.totals.all.flows,
      };
      for (const fn of this.listeners) {
        try {
          await fn(event);
        } catch (err) {
          this.opts.log?.error({ err, path: finalPath }, 'hourSealed listener failed');
        }
      }
    }
    // Rows that arrived while sealing: the hour opens again (reopening the sealed file) and takes them.
    if (ok && h.pending.length > 0 && !this.closed) {
      const late = h.pending;
      const again = this.hourFor(h.source, h.hourStart);
      appendRows(again.pending, late, 0, late.length);
    }
    // The sealed hour's batches are done with (its open-hour aggregates are not kept): lent
    // ones go back to the listener that lent them.
    for (const seg of h.aggQueue.splice(0)) if (seg.last) this.retire(seg.batch);
    h.aggQueuedRows = 0;
    this.retire(h.pending);
  }

  /**
   * Writes the hour's rows as large blocks into `nfcapd.sealing.*`, with the
   * footer, fsyncs it and renames it over the final name; then drops the
   * open file. Yields to the event loop between blocks so ingest goes on.
   * When the live blocks are already large it seals the open file in place.
   */
  private async compactAndSeal(h: OpenHour, tmpPath: string, finalPath: string): Promise<void> {
    const groups: number[][] = [];
    let cur: number[] = [];
    let rows = 0;
    h.blocks.forEach((b, i) => {
      if (cur.length > 0 && rows + b.rows > this.blockRows) {
        groups.push(cur);
        cur = [];
        rows = 0;
      }
      cur.push(i);
      rows += b.rows;
    });
    if (cur.length > 0) groups.push(cur);
    const compact = groups.some((g) => g.length > 1);

    if (!compact) {
      // In place: footer + trailer after the last block, fsync, rename.
      const footer = encodeFooter({ ...h.totals, blocks: h.blocks.length }, h.blocks);
      const block = frameBlock(BLOCK.footer, h.blocks.length, [footer], footer);
      this.writeAll(h.fd, block, h.offset);
      this.writeAll(h.fd, encodeTrailer(h.offset), h.offset + block.length);
      this.cfs.ftruncateSync(h.fd, h.offset + block.length + TRAILER_SIZE);
      this.cfs.fsyncSync(h.fd);
      this.closeFd(h);
      this.cfs.renameSync(h.path, finalPath);
      fsyncDir(this.cfs, this.dir(h.source));
      return;
    }

    const src = CaptureFile.open(h.path, { cfs: this.cfs, codecs: this.codecs });
    let fd = -1;
    try {
      fd = this.cfs.openSync(tmpPath, 'w+');
      const header = this.headerOf(h);
      let pos = 0;
      this.writeAll(fd, header, pos);
      pos += header.length;
      const blocks: BlockLocation[] = [];
      const totals = emptyTotals();
      for (const g of groups) {
        const batch = new FlowBatch(g.reduce((s, i) => s + h.blocks[i]!.rows, 0));
        for (const i of g) {
          const loc = h.blocks[i]!;
          // Our own blocks, located by what we wrote; the directory of the walk must agree.
          const k = src.blocks.findIndex((b) => b.offset === loc.offset);
          if (k < 0) throw new CaptureFileError('bad-block', 'block written by this writer is missing', h.path, loc.offset);
          src.readBlock(k, undefined, batch, batch.length);
        }
        const { block, index } = encodeBlock(batch, 0, batch.length, this.codec);
        this.writeAll(fd, block, pos);
        blocks.push(blockLocation(pos, block.length, index));
        accumulateTotals(totals, batch);
        pos += block.length;
        await yieldToLoop();
      }
      totals.recoveredDroppedBytes = h.totals.recoveredDroppedBytes;
      totals.blocks = blocks.length;
      const footer = encodeFooter(totals, blocks);
      const fblock = frameBlock(BLOCK.footer, blocks.length, [footer], footer);
      this.writeAll(fd, fblock, pos);
      this.writeAll(fd, encodeTrailer(pos), pos + fblock.length);
      this.cfs.fsyncSync(fd);
      this.cfs.closeSync(fd);
      fd = -1;
      this.cfs.renameSync(tmpPath, finalPath);
      fsyncDir(this.cfs, this.dir(h.source));
    } catch (err) {
      if (fd >= 0) this.cfs.closeSync(fd);
      try {
        this.cfs.unlinkSync(tmpPath);
      } catch {
        // nothing was created, or it cannot be removed: recovery removes sealing files at start
      }
      throw err;
    } finally {
      src.close();
    }
    this.closeFd(h);
    try {
      this.cfs.unlinkSync(h.path);
    } catch (err) {
      // The sealed file is complete; a stale open file of a sealed hour is ignored by readers and removed at start.
      this.opts.log?.warn({ err, path: h.path }, 'open file of a sealed hour could not be removed');
    }
  }

  // ------------------------------------------------------------------ recovery

  /** Recovers every source directory under `<dataDir>/flows`. */
  private recoverAll(): void {
    const root = join(this.opts.dataDir, 'flows');
    let sources: string[];
    try {
      sources = this.cfs.readdirSync(root);
    } catch {
      return;
    }
    for (const source of sources) {
      const dir = join(root, source);
      let names: string[];
      try {
        names = this.cfs.readdirSync(dir);
      } catch {
        continue;
      }
      const sealed = new Set<number>();
      for (const name of names) {
        const p = parseCaptureName(name, this.opts.timezone);
        if (p?.kind === 'sealed') sealed.add(p.hourStart);
      }
      for (const name of names) {
        const p = parseCaptureName(name, this.opts.timezone);
        if (!p || p.kind === 'sealed') continue;
        const path = join(dir, name);
        if (p.kind === 'sealing' || sealed.has(p.hourStart)) {
          // An unfinished compacted copy, or an open file whose sealed copy was already renamed in place.
          this.tryUnlink(path);
          continue;
        }
        const k = this.key(source, p.hourStart);
        if (this.hours.has(k)) continue;
        const h = this.newHour(source, p.hourStart);
        if (this.recoverFile(source, path, h)) this.hours.set(k, h);
      }
    }
  }

  private tryUnlink(path: string): void {
    try {
      this.cfs.unlinkSync(path);
    } catch (err) {
      this.opts.log?.warn({ err, path }, 'leftover capture file could not be removed');
    }
  }

  /**
   * Checks an open file block by block (index and column checksums), cuts
   * it after the last good block (or at `cutAt`), and loads its state into
   * `h` so writing continues there. Returns false when the file was unusable.
   */
  private recoverFile(source: string, path: string, h: OpenHour, cutAt?: number): boolean {
    let fd = -1;
    try {
      fd = this.cfs.openSync(path, 'r+');
      const size = this.cfs.fstatSync(fd).size;
      const head = Buffer.alloc(Math.min(size, 65536));
      this.cfs.readSync(fd, head, 0, head.length, 0);
      let headerSize: number;
      try {
        const hdr = decodeHeader(head, path);
        headerSize = hdr.headerSize;
        if (hdr.source !== source) throw new CaptureFileError('bad-header', `header names source ${hdr.source}`, path);
      } catch (err) {
        if (!(err instanceof CaptureFileError)) throw err;
        this.cfs.closeSync(fd);
        fd = -1;
        // Crash while the header was being written: no flow can be in it.
        if (size <= 4096) {
          this.cfs.unlinkSync(path);
          this.counters.recoveredFiles++;
          this.createFile(h);
          return h.fd >= 0;
        }
        const aside = `${path}.damaged`;
        this.cfs.renameSync(path, aside);
        this.counters.damagedFilesMovedAside++;
        this.opts.log?.error({ err, path, movedTo: aside }, 'open capture file has a damaged header; moved aside');
        this.createFile(h);
        return h.fd >= 0;
      }
      const good = this.validBlocks(fd, path, headerSize, cutAt ?? size);
      const end = good.length ? good[good.length - 1]!.offset + good[good.length - 1]!.size : headerSize;
      if (end < size) {
        const dropped = size - end;
        this.cfs.ftruncateSync(fd, end);
        if (cutAt === undefined) {
          this.counters.recoveredDroppedBytes += dropped;
          this.counters.recoveredDroppedBlocks++;
          h.totals.recoveredDroppedBytes += dropped;
          this.opts.log?.warn(
            { path, droppedBytes: dropped, keptBlocks: good.length },
            'recovered open capture file: cut a torn tail',
          );
        }
      }
      h.fd = fd;
      h.headerSize = headerSize;
      h.offset = end;
      h.blocks = good;
      h.path = path;
      // Totals and aggregates of what the file holds are read back in the background, a block
      // at a time: a start does not wait for (nor hold in memory) an hour of rows. Until then
      // the hour's figures are answered from the file itself (aggregatesFor says so).
      if (good.length > 0) {
        h.recovery?.file.close();
        h.recovery = {
          file: CaptureFile.open(path, { cfs: this.cfs, codecs: this.codecs }),
          next: 0,
          startedMs: performance.now(),
        };
        this.scheduleRecovery();
      }
      if (cutAt === undefined) this.counters.recoveredFiles++;
      return true;
    } catch (err) {
      if (fd >= 0) {
        try {
          this.cfs.closeSync(fd);
        } catch {
          // already failing
        }
      }
      h.fd = -1;
      this.counters.writeErrors++;
      this.opts.log?.error({ err, path }, 'open capture file could not be recovered');
      return false;
    }
  }

  /** Blocks from the start that are whole and whose checksums hold (every column checked). */
  private validBlocks(fd: number, path: string, headerSize: number, limit: number): BlockLocation[] {
    const out: BlockLocation[] = [];
    let pos = headerSize;
    const hb = Buffer.alloc(BLOCK_HEADER_SIZE);
    while (pos + BLOCK_HEADER_SIZE <= limit) {
      if (this.cfs.readSync(fd, hb, 0, BLOCK_HEADER_SIZE, pos) < BLOCK_HEADER_SIZE) break;
      const h = decodeBlockHeader(hb, 0);
      const end = pos + BLOCK_HEADER_SIZE + h.size;
      if (h.type !== BLOCK.data || end > limit || h.size > 1 << 30) break;
      const payload = Buffer.alloc(h.size);
      if (this.cfs.readSync(fd, payload, 0, h.size, pos + BLOCK_HEADER_SIZE) < h.size) break;
      let meta;
      try {
        meta = decodeBlockMeta(payload, h.size, path, pos);
      } catch {
        break;
      }
      if (checksum(payload.subarray(0, meta.metaSize)) !== h.crc || meta.index.rows !== h.aux) break;
      if (meta.columns.some((c) => checksum(payload.subarray(c.offset, c.offset + c.storedLen)) !== c.crc)) break;
      const ix = meta.index;
      out.push(blockLocation(pos, end - pos, ix));
      pos = end;
    }
    return out;
  }
}
