/**
 * The file of an open hour on disk: created with its header, reopened when
 * rows arrive for an hour already sealed, and recovered after a crash
 * (blocks checked, a torn tail cut off and counted, then the blocks read back
 * into the hour's totals and aggregates in the background). Creating and
 * recovering call each other (a file found where one is to be created is
 * recovered; a file whose header is damaged is replaced), so they stay in
 * one module.
 */
import { join } from 'node:path';
import { accumulateTotals, FlowAggregates } from './aggregate.js';
import { CaptureFile } from './capture-file.js';
import { writeAll, type CaptureFs } from './capture-fs.js';
import { parseCaptureName, sourceDir } from './file-names.js';
import {
  BLOCK,
  BLOCK_HEADER_SIZE,
  blockLocation,
  CaptureFileError,
  checksum,
  decodeBlockHeader,
  decodeBlockMeta,
  decodeHeader,
  encodeHeader,
  INTERVAL_SEC,
  type BlockLocation,
} from './format.js';
import type { OpenHour } from './open-hour.js';
import type { WriterContext } from './writer-context.js';

/** The columns accumulateTotals reads: all a recovery without aggregates decodes. */
const TOTALS_COLUMNS = ['received', 'start', 'end', 'bytes', 'packets', 'proto', 'tcpFlags'] as const;

/** The file header of hour `h`, created now (the open file's and, at compaction, the sealed file's). */
export function headerOf(ctx: WriterContext, h: OpenHour): Buffer {
  return encodeHeader({
    hourStart: h.hourStart,
    intervalSec: INTERVAL_SEC,
    codec: ctx.codec.id,
    source: h.source,
    createdAt: ctx.now(),
  });
}

/** Creates the file of hour `h` with its header; a file already there (a crash, start() not called) is recovered instead. */
export function createFile(ctx: WriterContext, h: OpenHour): void {
  try {
    ctx.cfs.mkdirSync(sourceDir(ctx.dataDir, h.source), { recursive: true });
    if (ctx.cfs.existsSync(h.path)) {
      // Left by a crash and not recovered at start (start() not called): continue it safely.
      recoverFile(ctx, h.source, h.path, h);
      return;
    }
    const header = headerOf(ctx, h);
    const fd = ctx.cfs.openSync(h.path, 'w+');
    h.fd = fd;
    writeAll(ctx.cfs, fd, header, 0);
    h.headerSize = header.length;
    h.offset = header.length;
    ctx.counters.hoursOpened++;
  } catch (err) {
    ctx.counters.writeErrors++;
    closeFd(ctx.cfs, h);
    h.offset = 0;
    ctx.rateLimited('open', () =>
      ctx.log?.error({ err, path: h.path }, 'capture file cannot be created; rows of this hour are dropped until it can'),
    );
  }
}

/** Turns a sealed hour back into an open one, for rows that arrive after it was sealed. */
export function reopen(ctx: WriterContext, h: OpenHour, sealedPath: string): void {
  try {
    const f = CaptureFile.open(sealedPath, { requireSealed: true, cfs: ctx.cfs, codecs: ctx.codecs });
    const dataEnd = f.dataEnd;
    f.close();
    // Rename first: a crash between the two steps leaves an open file with a footer, which recovery cuts.
    ctx.cfs.renameSync(sealedPath, h.path);
    ctx.counters.hoursReopened++;
    recoverFile(ctx, h.source, h.path, h, dataEnd);
  } catch (err) {
    ctx.counters.writeErrors++;
    ctx.rateLimited('reopen', () =>
      ctx.log?.error({ err, path: sealedPath }, 'sealed hour cannot be reopened for late rows; they are dropped'),
    );
  }
}

/** Closes the file of hour `h`, if open. */
export function closeFd(cfs: CaptureFs, h: OpenHour): void {
  if (h.fd >= 0) {
    try {
      cfs.closeSync(h.fd);
    } catch {
      // nothing more to do for a descriptor that will not close
    }
  }
  h.fd = -1;
}

/**
 * The open files left in `<dataDir>/flows` by an earlier run, one source
 * directory at a time, to be recovered. Leftovers of a seal (an unfinished
 * compacted copy, or an open file whose sealed copy was already renamed in
 * place) are removed as they are met.
 */
export function* openFilesLeft(ctx: WriterContext): Generator<{ source: string; path: string; hourStart: number }> {
  const root = join(ctx.dataDir, 'flows');
  let sources: string[];
  try {
    sources = ctx.cfs.readdirSync(root);
  } catch {
    return;
  }
  for (const source of sources) {
    const dir = join(root, source);
    let names: string[];
    try {
      names = ctx.cfs.readdirSync(dir);
    } catch {
      continue;
    }
    const sealed = new Set<number>();
    for (const name of names) {
      const p = parseCaptureName(name, ctx.timezone);
      if (p?.kind === 'sealed') sealed.add(p.hourStart);
    }
    for (const name of names) {
      const p = parseCaptureName(name, ctx.timezone);
      if (!p || p.kind === 'sealed') continue;
      const path = join(dir, name);
      if (p.kind === 'sealing' || sealed.has(p.hourStart)) {
        // An unfinished compacted copy, or an open file whose sealed copy was already renamed in place.
        tryUnlink(ctx, path);
        continue;
      }
      yield { source, path, hourStart: p.hourStart };
    }
  }
}

function tryUnlink(ctx: WriterContext, path: string): void {
  try {
    ctx.cfs.unlinkSync(path);
  } catch (err) {
    ctx.log?.warn({ err, path }, 'leftover capture file could not be removed');
  }
}

/**
 * Checks an open file block by block (index and column checksums), cuts
 * it after the last good block (or at `cutAt`), and loads its state into
 * `h` so writing continues there. Returns false when the file was unusable.
 */
export function recoverFile(ctx: WriterContext, source: string, path: string, h: OpenHour, cutAt?: number): boolean {
  let fd = -1;
  try {
    fd = ctx.cfs.openSync(path, 'r+');
    const size = ctx.cfs.fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, 65536));
    ctx.cfs.readSync(fd, head, 0, head.length, 0);
    let headerSize: number;
    try {
      const hdr = decodeHeader(head, path);
      headerSize = hdr.headerSize;
      if (hdr.source !== source) throw new CaptureFileError('bad-header', `header names source ${hdr.source}`, path);
    } catch (err) {
      if (!(err instanceof CaptureFileError)) throw err;
      ctx.cfs.closeSync(fd);
      fd = -1;
      // Crash while the header was being written: no flow can be in it.
      if (size <= 4096) {
        ctx.cfs.unlinkSync(path);
        ctx.counters.recoveredFiles++;
        createFile(ctx, h);
        return h.fd >= 0;
      }
      const aside = `${path}.damaged`;
      ctx.cfs.renameSync(path, aside);
      ctx.counters.damagedFilesMovedAside++;
      ctx.log?.error({ err, path, movedTo: aside }, 'open capture file has a damaged header; moved aside');
      createFile(ctx, h);
      return h.fd >= 0;
    }
    const good = validBlocks(ctx.cfs, fd, path, headerSize, cutAt ?? size);
    const end = good.length ? good[good.length - 1]!.offset + good[good.length - 1]!.size : headerSize;
    if (end < size) {
      const dropped = size - end;
      ctx.cfs.ftruncateSync(fd, end);
      if (cutAt === undefined) {
        ctx.counters.recoveredDroppedBytes += dropped;
        ctx.counters.recoveredDroppedBlocks++;
        h.totals.recoveredDroppedBytes += dropped;
        ctx.log?.warn({ path, droppedBytes: dropped, keptBlocks: good.length }, 'recovered open capture file: cut a torn tail');
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
        file: CaptureFile.open(path, { cfs: ctx.cfs, codecs: ctx.codecs }),
        next: 0,
        startedMs: performance.now(),
      };
      ctx.scheduleRecovery();
    }
    if (cutAt === undefined) ctx.counters.recoveredFiles++;
    return true;
  } catch (err) {
    if (fd >= 0) {
      try {
        ctx.cfs.closeSync(fd);
      } catch {
        // already failing
      }
    }
    h.fd = -1;
    ctx.counters.writeErrors++;
    ctx.log?.error({ err, path }, 'open capture file could not be recovered');
    return false;
  }
}

/** Blocks from the start that are whole and whose checksums hold (every column checked). */
function validBlocks(cfs: CaptureFs, fd: number, path: string, headerSize: number, limit: number): BlockLocation[] {
  const out: BlockLocation[] = [];
  let pos = headerSize;
  const hb = Buffer.alloc(BLOCK_HEADER_SIZE);
  while (pos + BLOCK_HEADER_SIZE <= limit) {
    if (cfs.readSync(fd, hb, 0, BLOCK_HEADER_SIZE, pos) < BLOCK_HEADER_SIZE) break;
    const h = decodeBlockHeader(hb, 0);
    const end = pos + BLOCK_HEADER_SIZE + h.size;
    if (h.type !== BLOCK.data || end > limit || h.size > 1 << 30) break;
    const payload = Buffer.alloc(h.size);
    if (cfs.readSync(fd, payload, 0, h.size, pos + BLOCK_HEADER_SIZE) < h.size) break;
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

/**
 * Reads recovered blocks of an hour back into its totals (and aggregates) for
 * at most `budgetMs`, one block at a time; true when none is left.
 */
export function recoverStep(ctx: WriterContext, h: OpenHour, budgetMs: number, aggregates: boolean): boolean {
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
      ctx.counters.recoveredDroppedBlocks++;
      ctx.log?.error(
        { err, path: h.path, block: i },
        'recovered block could not be read back; its flows are not in the open hour figures',
      );
    }
    if (performance.now() >= until) break;
  }
  if (r.next < r.file.blocks.length) return false;
  r.file.close();
  h.recovery = undefined;
  ctx.log?.info(
    { path: h.path, flows: h.totals.all.flows, ms: Math.round(performance.now() - r.startedMs) },
    'open hour read back after the restart',
  );
  return true;
}
