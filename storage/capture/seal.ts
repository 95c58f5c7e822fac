/**
 * Sealing an hour's file: its small live blocks merged into blocks of up to
 * `blockRows` rows in a compacted copy, each block's rows in the order of
 * block-order.ts (protocol, destination port, arrival), the footer and
 * trailer written, the copy fsynced and renamed over the sealed name; or,
 * when the live blocks are already large, the footer added to the open file
 * in place (their rows stay in arrival order). The writer (writer.ts)
 * decides when, and tells listeners.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { FlowBatch } from '../../common/flow-batch.js';
import { accumulateTotals } from './aggregate.js';
import { sealedRowOrder } from './block-order.js';
import { encodeBlock } from './block-codec.js';
import { CaptureFile } from './capture-file.js';
import { fsyncDir, writeAll } from './capture-fs.js';
import { sourceDir } from './file-names.js';
import {
  BLOCK,
  blockLocation,
  CaptureFileError,
  emptyTotals,
  ROW_ORDER,
  encodeFooter,
  encodeTrailer,
  frameBlock,
  TRAILER_SIZE,
  type BlockLocation,
} from './format.js';
import { closeFd, headerOf } from './hour-file.js';
import type { OpenHour } from './open-hour.js';
import type { WriterContext } from './writer-context.js';

/**
 * Writes the hour's rows as large blocks into `nfcapd.sealing.*`, with the
 * footer, fsyncs it and renames it over the final name; then drops the
 * open file. Yields to the event loop between blocks so ingest goes on.
 * When the live blocks are already large it seals the open file in place.
 */
export async function compactAndSeal(ctx: WriterContext, h: OpenHour, tmpPath: string, finalPath: string): Promise<void> {
  const groups: number[][] = [];
  let cur: number[] = [];
  let rows = 0;
  h.blocks.forEach((b, i) => {
    if (cur.length > 0 && rows + b.rows > ctx.blockRows) {
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
    writeAll(ctx.cfs, h.fd, block, h.offset);
    writeAll(ctx.cfs, h.fd, encodeTrailer(h.offset), h.offset + block.length);
    ctx.cfs.ftruncateSync(h.fd, h.offset + block.length + TRAILER_SIZE);
    ctx.cfs.fsyncSync(h.fd);
    closeFd(ctx.cfs, h);
    ctx.cfs.renameSync(h.path, finalPath);
    fsyncDir(ctx.cfs, sourceDir(ctx.dataDir, h.source));
    return;
  }

  const src = CaptureFile.open(h.path, { cfs: ctx.cfs, codecs: ctx.codecs });
  let fd = -1;
  try {
    fd = ctx.cfs.openSync(tmpPath, 'w+');
    const header = headerOf(ctx, h);
    let pos = 0;
    writeAll(ctx.cfs, fd, header, pos);
    pos += header.length;
    const blocks: BlockLocation[] = [];
    const totals = emptyTotals();
    const sorted = new FlowBatch(ctx.blockRows);
    for (const g of groups) {
      const batch = new FlowBatch(g.reduce((s, i) => s + h.blocks[i]!.rows, 0));
      for (const i of g) {
        const loc = h.blocks[i]!;
        // Our own blocks, located by what we wrote; the directory of the walk must agree.
        const k = src.blocks.findIndex((b) => b.offset === loc.offset);
        if (k < 0) throw new CaptureFileError('bad-block', 'block written by this writer is missing', h.path, loc.offset);
        src.readBlock(k, undefined, batch, batch.length);
      }
      sorted.clear();
      sorted.gatherRows(batch, sealedRowOrder(batch), 0, batch.length);
      const { block, index } = encodeBlock(sorted, 0, sorted.length, ctx.codec, ROW_ORDER.protoDstPort);
      writeAll(ctx.cfs, fd, block, pos);
      blocks.push(blockLocation(pos, block.length, index));
      accumulateTotals(totals, batch);
      pos += block.length;
      await yieldToLoop();
    }
    totals.recoveredDroppedBytes = h.totals.recoveredDroppedBytes;
    totals.blocks = blocks.length;
    const footer = encodeFooter(totals, blocks);
    const fblock = frameBlock(BLOCK.footer, blocks.length, [footer], footer);
    writeAll(ctx.cfs, fd, fblock, pos);
    writeAll(ctx.cfs, fd, encodeTrailer(pos), pos + fblock.length);
    ctx.cfs.fsyncSync(fd);
    ctx.cfs.closeSync(fd);
    fd = -1;
    ctx.cfs.renameSync(tmpPath, finalPath);
    fsyncDir(ctx.cfs, sourceDir(ctx.dataDir, h.source));
  } catch (err) {
    if (fd >= 0) ctx.cfs.closeSync(fd);
    try {
      ctx.cfs.unlinkSync(tmpPath);
    } catch {
      // nothing was created, or it cannot be removed: recovery removes sealing files at start
    }
    throw err;
  } finally {
    src.close();
  }
  closeFd(ctx.cfs, h);
  try {
    ctx.cfs.unlinkSync(h.path);
  } catch (err) {
    // The sealed file is complete; a stale open file of a sealed hour is ignored by readers and removed at start.
    ctx.log?.warn({ err, path: h.path }, 'open file of a sealed hour could not be removed');
  }
}
