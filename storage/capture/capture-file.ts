/**
 * One capture file opened for reading: its header, where its data blocks
 * are (from the footer of a sealed file, or by walking the blocks of an open
 * one, stopping at a torn tail), and the decoding of a block's columns or
 * chosen rows. Listing files and scanning many of them is reader.ts's.
 */
import { FlowBatch } from '../../common/flow-batch.js';
import { checkBlockColumns, decodeBlockColumns, decodeBlockRows, plainBlockColumns } from './block-codec.js';
import type { PlainColumn } from './column-codec.js';
import { nodeFs, type CaptureFs } from './capture-fs.js';
import { CodecSet } from './codec.js';
import {
  ALL_COLUMNS,
  BLOCK,
  BLOCK_HEADER_SIZE,
  blockLocation,
  CaptureFileError,
  checksum,
  decodeBlockHeader,
  decodeBlockMeta,
  decodeFooter,
  decodeHeader,
  DIR_ENTRY_SIZE,
  INDEX_SIZE,
  TRAILER_MAGIC,
  TRAILER_SIZE,
  withDependencies,
  type BlockLocation,
  type ColumnEntry,
  type ColumnName,
  type FileHeader,
  type FileTotals,
} from './format.js';

// Enough to hold a block header plus the meta of a block with every known column.
const META_PROBE = BLOCK_HEADER_SIZE + INDEX_SIZE + 32 * DIR_ENTRY_SIZE;

/** A data block read from disk, its index checked, not yet decoded. */
export interface LoadedBlock {
  payload: Buffer;
  columns: ColumnEntry[];
  rows: number;
  offset: number;
  /** How the rows are ordered, as the block's index states it (ROW_ORDER). */
  rowOrder: number;
  /** The columns whose bytes were read, when not all were (`loadBlock`'s `columns`). */
  only?: ReadonlySet<ColumnName>;
}

/** Gaps between wanted columns up to this size are read through rather than skipped (one read instead of two). */
const READ_THROUGH = 16 * 1024;

/** An opened capture file: header, block locations, and block decoding. */
export class CaptureFile {
  /** True when the file has a valid footer (sealed); false for an open file. */
  readonly sealed: boolean;
  /** Footer totals (sealed files only). */
  readonly totals: FileTotals | undefined;
  /** Data blocks in file order. */
  readonly blocks: BlockLocation[];
  /** An open file whose last block was still being written (not an error). */
  readonly incompleteTail: boolean;
  /** File offset just after the last complete block (where a writer would append). */
  readonly dataEnd: number;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly cfs: CaptureFs,
    readonly header: FileHeader,
    readonly size: number,
    layout: { sealed: boolean; totals?: FileTotals; blocks: BlockLocation[]; incompleteTail: boolean; dataEnd: number },
    private readonly codecs: CodecSet,
    private readonly reuseBlockBuffer = false,
  ) {
    this.sealed = layout.sealed;
    this.totals = layout.totals;
    this.blocks = layout.blocks;
    this.incompleteTail = layout.incompleteTail;
    this.dataEnd = layout.dataEnd;
  }

  /**
   * Opens a file. With `requireSealed` a file without a valid footer is an
   * error (a sealed name whose tail was cut); otherwise it is walked block
   * by block as an open file. With `reuseBlockBuffer`, the blocks `loadBlock` reads in part
   * share one buffer: each is valid until the next such load (for a scan that decodes a block
   * before it loads the next). Throws CaptureFileError.
   */
  static open(
    path: string,
    opts: { requireSealed?: boolean; cfs?: CaptureFs; codecs?: CodecSet; reuseBlockBuffer?: boolean } = {},
  ): CaptureFile {
    const cfs = opts.cfs ?? nodeFs;
    let fd: number;
    try {
      fd = cfs.openSync(path, 'r');
    } catch (err) {
      throw new CaptureFileError('io', `cannot open: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, path, undefined, {
        cause: err,
      });
    }
    try {
      const size = cfs.fstatSync(fd).size;
      const head = readAt(cfs, fd, 0, Math.min(size, 65536), path);
      const header = decodeHeader(head, path);
      const layout = readFooter(cfs, fd, path, header, size) ?? walkBlocks(cfs, fd, path, header, size);
      if (opts.requireSealed && !layout.sealed) {
        throw new CaptureFileError('truncated', 'sealed file has no valid footer (cut short or damaged)', path, size);
      }
      return new CaptureFile(path, fd, cfs, header, size, layout, opts.codecs ?? new CodecSet(), opts.reuseBlockBuffer);
    } catch (err) {
      cfs.closeSync(fd);
      throw err;
    }
  }

  /** Rows in the file (sum over blocks). */
  get rows(): number {
    let n = 0;
    for (const b of this.blocks) n += b.rows;
    return n;
  }

  /**
   * Decodes the `wanted` columns (plus what they depend on) of block `i`
   * into `out` at row `at` (a new batch when omitted). Throws CaptureFileError
   * when the block is damaged.
   */
  readBlock(i: number, wanted: readonly ColumnName[] = ALL_COLUMNS, out?: FlowBatch, at = 0, loaded?: LoadedBlock): FlowBatch {
    const { payload, columns, rows, offset } = this.block(i, wanted, loaded);
    const batch = out ?? new FlowBatch(rows);
    batch.reserve(at + rows - batch.length);
    decodeBlockColumns(payload, columns, rows, withDependencies(wanted), this.codecs, batch, at, this.path, offset);
    if (batch.length < at + rows) batch.length = at + rows;
    return batch;
  }

  /** Like readBlock for only the rows `idx` (ascending) of block `i`, into rows `at …` of `out`. */
  readBlockRows(
    i: number,
    idx: ArrayLike<number>,
    wanted: readonly ColumnName[],
    out: FlowBatch,
    at: number,
    loaded?: LoadedBlock,
  ): void {
    const { payload, columns, rows, offset } = this.block(i, wanted, loaded);
    decodeBlockRows(payload, columns, rows, idx, new Set(wanted), this.codecs, out, at, this.path, offset);
  }

  /**
   * The `wanted` numeric columns of block `i` as stored, for reading without decoding
   * (block-codec.ts's plainBlockColumns); undefined when one of them is not stored so.
   */
  plainColumns(i: number, wanted: readonly ColumnName[], loaded?: LoadedBlock): Map<ColumnName, PlainColumn> | undefined {
    const { payload, columns, rows, offset } = this.block(i, wanted, loaded);
    return plainBlockColumns(payload, columns, rows, wanted, this.codecs, this.path, offset);
  }

  /** Checks the stored bytes of the `wanted` columns of block `i` without decoding them (block-codec.ts's checkBlockColumns). */
  checkColumns(i: number, wanted: readonly ColumnName[], loaded?: LoadedBlock): void {
    const { payload, columns, offset } = this.block(i, wanted, loaded);
    checkBlockColumns(payload, columns, wanted, this.codecs, this.path, offset);
  }

  /** Block `i` as the caller loaded it (which must hold the `wanted` columns), or read whole now. */
  private block(i: number, wanted: readonly ColumnName[], loaded: LoadedBlock | undefined): LoadedBlock {
    if (!loaded) return this.loadBlock(i);
    assertLoaded(loaded, wanted);
    return loaded;
  }

  /**
   * Reads block `i` and checks its header and index checksum; columns are checked as they are
   * decoded. With `columns`, only those columns' bytes are read (and what they are stored
   * relative to): a query that needs four columns of thirty reads a fraction of the block.
   */
  loadBlock(i: number, columns?: readonly ColumnName[]): LoadedBlock {
    const loc = this.blocks[i];
    if (!loc) throw new RangeError(`block ${i} of ${this.blocks.length}`);
    let partial = columns !== undefined && loc.size > META_PROBE;
    let buf = readAt(this.cfs, this.fd, loc.offset, partial ? META_PROBE : loc.size, this.path);
    const h = decodeBlockHeader(buf, 0);
    if (h.type !== BLOCK.data || h.size + BLOCK_HEADER_SIZE !== loc.size) {
      throw new CaptureFileError('bad-block', 'block header does not match the directory', this.path, loc.offset);
    }
    // A directory longer than the probe (a writer with more columns than this build knows) is read whole.
    if (partial && BLOCK_HEADER_SIZE + buf.readUInt16LE(BLOCK_HEADER_SIZE + 6) > buf.length) {
      buf = readAt(this.cfs, this.fd, loc.offset, loc.size, this.path);
      partial = false;
    }
    let payload = buf.subarray(BLOCK_HEADER_SIZE);
    if (partial) {
      // Room for the whole payload, the directory in place; the wanted columns are read into it below.
      payload = this.blockBuffer(h.size);
      buf.copy(payload, 0, BLOCK_HEADER_SIZE);
    }
    const meta = decodeBlockMeta(payload, h.size, this.path, loc.offset);
    if (checksum(payload.subarray(0, meta.metaSize)) !== h.crc) {
      throw new CaptureFileError('bad-checksum', 'block index checksum mismatch', this.path, loc.offset);
    }
    if (meta.index.rows !== loc.rows)
      throw new CaptureFileError('bad-block', 'block row count does not match the directory', this.path, loc.offset);
    const block: LoadedBlock = {
      payload,
      columns: meta.columns,
      rows: meta.index.rows,
      offset: loc.offset,
      rowOrder: meta.index.rowOrder,
    };
    if (partial) {
      const only = withDependencies(columns!);
      this.readColumns(loc.offset + BLOCK_HEADER_SIZE, payload, meta.columns, only);
      block.only = only;
    }
    return block;
  }

  private shared: Buffer | undefined;

  /** A buffer of `size` bytes for a block read in part: the shared one with `reuseBlockBuffer` (a fresh one touches a page per 4 KiB as it is read into). */
  private blockBuffer(size: number): Buffer {
    if (!this.reuseBlockBuffer) return Buffer.allocUnsafe(size);
    if (!this.shared || this.shared.length < size) this.shared = Buffer.allocUnsafe(size);
    return this.shared.subarray(0, size);
  }

  /** Reads the stored bytes of the `only` columns into `payload` at their offsets (the rest stays unread). */
  private readColumns(at: number, payload: Buffer, entries: ColumnEntry[], only: ReadonlySet<ColumnName>): void {
    const spans: Array<[number, number]> = [];
    for (const e of entries) {
      const name = ALL_COLUMNS[e.id];
      // Bounds are the decoder's to check (a column running past the block is a bad block there).
      if (name === undefined || !only.has(name) || e.offset + e.storedLen > payload.length) continue;
      spans.push([e.offset, e.offset + e.storedLen]);
    }
    spans.sort((a, b) => a[0] - b[0]);
    let k = 0;
    while (k < spans.length) {
      const from = spans[k]![0];
      let to = spans[k]![1];
      while (++k < spans.length && spans[k]![0] - to <= READ_THROUGH) to = Math.max(to, spans[k]![1]);
      readInto(this.cfs, this.fd, payload, from, at + from, to - from, this.path);
    }
  }

  /** Releases the file descriptor. */
  close(): void {
    this.cfs.closeSync(this.fd);
  }
}

function readAt(cfs: CaptureFs, fd: number, pos: number, len: number, path: string): Buffer {
  const buf = Buffer.allocUnsafe(len);
  readInto(cfs, fd, buf, 0, pos, len, path);
  return buf;
}

/** Reads `len` bytes at file position `pos` into buf[at …]; a short file is `truncated`, a failed read `io`. */
function readInto(cfs: CaptureFs, fd: number, buf: Buffer, at: number, pos: number, len: number, path: string): void {
  let got = 0;
  try {
    while (got < len) {
      const n = cfs.readSync(fd, buf, at + got, len - got, pos + got);
      if (n === 0) break;
      got += n;
    }
  } catch (err) {
    throw new CaptureFileError('io', `read failed: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, path, pos, {
      cause: err,
    });
  }
  if (got < len) throw new CaptureFileError('truncated', `expected ${len} bytes at offset ${pos}, file ends`, path, pos);
}

/** A block loaded with some columns only must be asked for those: anything else is a caller's mistake, not damage. */
function assertLoaded(loaded: LoadedBlock, wanted: readonly ColumnName[]): void {
  if (!loaded.only) return;
  for (const c of withDependencies(wanted)) {
    if (!loaded.only.has(c)) throw new Error(`column ${c} was not loaded with block at ${loaded.offset}`);
  }
}

function readFooter(
  cfs: CaptureFs,
  fd: number,
  path: string,
  header: FileHeader,
  size: number,
): { sealed: true; totals: FileTotals; blocks: BlockLocation[]; incompleteTail: false; dataEnd: number } | undefined {
  if (size < header.headerSize + TRAILER_SIZE) return undefined;
  const t = readAt(cfs, fd, size - TRAILER_SIZE, TRAILER_SIZE, path);
  const th = decodeBlockHeader(t, 0);
  const tp = t.subarray(BLOCK_HEADER_SIZE);
  if (th.type !== BLOCK.trailer || th.size !== 16 || tp.readUInt32LE(8) !== TRAILER_MAGIC || checksum(tp) !== th.crc)
    return undefined;
  const footerOffset = tp.readDoubleLE(0);
  if (
    !Number.isSafeInteger(footerOffset) ||
    footerOffset < header.headerSize ||
    footerOffset > size - TRAILER_SIZE - BLOCK_HEADER_SIZE
  ) {
    throw new CaptureFileError('bad-block', 'trailer points outside the file', path, size - TRAILER_SIZE);
  }
  const fh = decodeBlockHeader(readAt(cfs, fd, footerOffset, BLOCK_HEADER_SIZE, path), 0);
  if (fh.type !== BLOCK.footer || footerOffset + BLOCK_HEADER_SIZE + fh.size !== size - TRAILER_SIZE) {
    throw new CaptureFileError('bad-block', 'footer does not end where the trailer starts', path, footerOffset);
  }
  const fp = readAt(cfs, fd, footerOffset + BLOCK_HEADER_SIZE, fh.size, path);
  if (checksum(fp) !== fh.crc) throw new CaptureFileError('bad-checksum', 'footer checksum mismatch', path, footerOffset);
  const { totals, blocks } = decodeFooter(fp, path);
  for (const b of blocks) {
    if (b.offset < header.headerSize || b.offset + b.size > footerOffset) {
      throw new CaptureFileError('bad-block', 'footer lists a block outside the data area', path, footerOffset);
    }
  }
  return { sealed: true, totals, blocks, incompleteTail: false, dataEnd: footerOffset };
}

/** Walks an open file's blocks by their headers, stopping at the first incomplete one. */
function walkBlocks(
  cfs: CaptureFs,
  fd: number,
  path: string,
  header: FileHeader,
  size: number,
): { sealed: false; blocks: BlockLocation[]; incompleteTail: boolean; dataEnd: number } {
  const blocks: BlockLocation[] = [];
  let pos = header.headerSize;
  let incompleteTail = false;
  while (pos < size) {
    if (pos + BLOCK_HEADER_SIZE > size) {
      incompleteTail = true;
      break;
    }
    const probe = readAt(cfs, fd, pos, Math.min(META_PROBE, size - pos), path);
    const h = decodeBlockHeader(probe, 0);
    const end = pos + BLOCK_HEADER_SIZE + h.size;
    if (end > size) {
      incompleteTail = true;
      break;
    }
    if (h.type === BLOCK.footer || h.type === BLOCK.trailer) break;
    if (h.type === BLOCK.data) {
      let meta;
      try {
        const payload =
          h.size + BLOCK_HEADER_SIZE <= probe.length
            ? probe.subarray(BLOCK_HEADER_SIZE)
            : readAt(cfs, fd, pos + BLOCK_HEADER_SIZE, Math.min(h.size, 65536), path);
        meta = decodeBlockMeta(payload, h.size, path, pos);
        if (checksum(payload.subarray(0, meta.metaSize)) !== h.crc)
          throw new CaptureFileError('bad-checksum', 'block index checksum mismatch', path, pos);
      } catch (err) {
        if (err instanceof CaptureFileError && err.code !== 'io') {
          // A block being written, or damage: nothing after it can be trusted in an open file.
          incompleteTail = true;
          break;
        }
        throw err;
      }
      blocks.push(blockLocation(pos, end - pos, meta.index));
    }
    pos = end;
  }
  const last = blocks[blocks.length - 1];
  return { sealed: false, blocks, incompleteTail, dataEnd: last ? last.offset + last.size : header.headerSize };
}
