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
 *
 * The parts live beside it: an open hour's state (open-hour.ts), its file on
 * disk, created, reopened and recovered (hour-file.ts), sealing (seal.ts),
 * counters and the context the parts share (writer-context.ts). This file
 * stays at ≈ 600 lines because what is left is one state machine over the
 * same open hours and spare batches: routing rows, flushing blocks, when to
 * seal, the aggregation queue and the background read-back.
 */
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { FlowBatch } from '../../common/flow-batch.js';
import type { Log } from '../../common/log.js';
import { CAPTURE_DEFAULTS } from './capture-defaults.js';
import { LogThrottle } from '../../common/log-throttle.js';
import { accumulateTotals, type FlowAggregatesView } from './aggregate.js';
import { encodeBlock } from './block-codec.js';
import { nodeFs, writeAll, type CaptureFs } from './capture-fs.js';
import { CodecSet, createCodec, type ByteCodec, type CodecName } from './codec.js';
import { currentName, hourStartOf, sealedName, sealingName, sourceDir } from './file-names.js';
import { blockLocation } from './format.js';
import { closeFd, createFile, openFilesLeft, recoverFile, recoverStep, reopen } from './hour-file.js';
import { appendRows, dropFront, newOpenHour, type AggSegment, type OpenHour } from './open-hour.js';
import { compactAndSeal } from './seal.js';
import { warmUpEncoding } from './warm-up.js';
import { newWriterCounters, type WriterContext, type WriterCounters } from './writer-context.js';

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

const LOG_EVERY_MS = 10_000;

/** Longest stretch the background recovery holds the event loop before it yields. */
const RECOVERY_SLICE_MS = 10;

// Emptied pending batches kept for reuse (per writer), at most this many.
const SPARE_BATCHES = 2;

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
  /** What the file-level parts (hour-file.ts, seal.ts) see of this writer. */
  private readonly ctx: WriterContext;
  private closed = false;

  constructor(private readonly opts: CaptureWriterOptions) {
    this.cfs = opts.cfs ?? nodeFs;
    this.now = opts.now ?? Date.now;
    this.logThrottle = new LogThrottle(LOG_EVERY_MS, this.now);
    this.flushIntervalMs = opts.flushIntervalMs ?? CAPTURE_DEFAULTS.flushIntervalMs;
    this.blockRows = opts.blockRows ?? CAPTURE_DEFAULTS.blockRows;
    this.graceMs = opts.sealGraceMs ?? 2 * this.flushIntervalMs;
    this.maxAggBacklogRows = Math.max(0, opts.maxAggregationBacklogRows ?? 4 * this.blockRows);
    this.codec = createCodec(opts.codec ?? CAPTURE_DEFAULTS.codec, opts.level ?? CAPTURE_DEFAULTS.level);
    this.ctx = {
      dataDir: opts.dataDir,
      timezone: opts.timezone,
      cfs: this.cfs,
      codec: this.codec,
      codecs: this.codecs,
      counters: this.counters,
      blockRows: this.blockRows,
      log: opts.log,
      now: this.now,
      rateLimited: (kind, fn) => this.rateLimited(kind, fn),
      scheduleRecovery: () => this.scheduleRecovery(),
    };
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
      closeFd(this.cfs, h);
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
        if (h.recovery && !h.sealing) left = !recoverStep(this.ctx, h, RECOVERY_SLICE_MS, this.opts.aggregates !== false) || left;
      }
      if (left) this.scheduleRecovery();
      else this.wakeRecoveryWaiters();
    });
  }

  /** Finishes an hour's recovery (totals only: a sealing hour keeps no aggregates), yielding between slices. */
  private async finishRecovery(h: OpenHour): Promise<void> {
    while (!recoverStep(this.ctx, h, RECOVERY_SLICE_MS, false)) await yieldToLoop();
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
    return newOpenHour(this.ctx, source, hourStart);
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
    if (this.cfs.existsSync(sealedPath)) reopen(this.ctx, h, sealedPath);
    else createFile(this.ctx, h);
    return h;
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
    if (h.fd < 0) createFile(this.ctx, h);
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
        writeAll(this.cfs, h.fd, block, h.offset);
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
        closeFd(this.cfs, h);
        if (this.cfs.existsSync(h.path)) this.cfs.unlinkSync(h.path);
        ok = true;
      } else {
        await compactAndSeal(this.ctx, h, join(dir, sealingName(h.hourStart, zone)), finalPath);
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

  // ------------------------------------------------------------------ recovery

  /** Recovers the open files left under `<dataDir>/flows` (hour-file.ts: openFilesLeft). */
  private recoverAll(): void {
    for (const { source, path, hourStart } of openFilesLeft(this.ctx)) {
      const k = this.key(source, hourStart);
      if (this.hours.has(k)) continue;
      const h = this.newHour(source, hourStart);
      if (recoverFile(this.ctx, source, path, h)) this.hours.set(k, h);
    }
  }
}
