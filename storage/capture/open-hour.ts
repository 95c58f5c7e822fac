/**
 * An open hour of the capture writer: its file's state (where the next block
 * goes, the blocks and totals so far), the rows waiting for the next block,
 * the rows waiting for the hour's aggregates, and the recovered blocks still
 * to be read back; and the row moves the writer makes on batches.
 */
import { join } from 'node:path';
import { ADDRESS_COLUMNS, FlowBatch, NUMERIC_COLUMNS } from '../../common/flow-batch.js';
import { FlowAggregates } from './aggregate.js';
import type { CaptureFile } from './capture-file.js';
import { currentName, hourEndOf, sourceDir } from './file-names.js';
import { emptyTotals, type BlockLocation, type FileTotals } from './format.js';
import type { WriterContext } from './writer-context.js';

/** An hour of one source being written; see the module comment. */
export interface OpenHour {
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
  /** Rows already in the file but not yet added to `aggregates` (CaptureWriter.catchUp in writer.ts). */
  aggQueue: AggSegment[];
  /** Rows in `aggQueue`. */
  aggQueuedRows: number;
  pending: FlowBatch;
  lastFlush: number;
  /**
   * Blocks a restart found in the file and has not yet added to `totals` and
   * `aggregates` (recoverStep in hour-file.ts); undefined once they all are.
   */
  recovery: RecoveryPass | undefined;
  sealing: boolean;
  /** Do not retry sealing before this time (after a failed seal). */
  sealRetryAt: number;
}

/** The blocks of a recovered file still to be read back, one at a time, in the background. */
export interface RecoveryPass {
  file: CaptureFile;
  next: number;
  startedMs: number;
}

/** Rows [from, from+rows) of a batch waiting for the aggregates; `last` when no later segment uses the batch (it can be reused). */
export interface AggSegment {
  batch: FlowBatch;
  from: number;
  rows: number;
  last: boolean;
}

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
export function dropFront(b: FlowBatch, n: number): void {
  const rest = b.length - n;
  if (rest > 0) {
    for (const name of NUMERIC_COLUMNS) b.cols[name].copyWithin(0, n, b.length);
    for (const name of ADDRESS_COLUMNS) b[name].copyWithin(0, n * 16, b.length * 16);
  }
  b.length = Math.max(0, rest);
}

/** A new open hour of `source` starting at `hourStart`, its file not yet created. */
export function newOpenHour(ctx: WriterContext, source: string, hourStart: number): OpenHour {
  return {
    source,
    hourStart,
    hourEnd: hourEndOf(hourStart),
    path: join(sourceDir(ctx.dataDir, source), currentName(hourStart, ctx.timezone)),
    fd: -1,
    offset: 0,
    headerSize: 0,
    blocks: [],
    totals: emptyTotals(),
    aggregates: new FlowAggregates(),
    aggQueue: [],
    aggQueuedRows: 0,
    pending: new FlowBatch(1024),
    lastFlush: ctx.now(),
    recovery: undefined,
    sealing: false,
    sealRetryAt: 0,
  };
}
