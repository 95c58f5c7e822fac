/**
 * Encodes rows of a FlowBatch into one data block, and decodes chosen columns back.
 *
 * Pure over buffers: no files, no clock. The writer frames and appends the
 * result; the reader hands in the payload bytes it read.
 */
import type { FlowBatch, NumericColumn } from '../../common/flow-batch.js';
import { decodeAddresses, gatherAddresses, encodeAddresses } from './address-codec.js';
import { CodecError, type ByteCodec, type CodecSet } from './codec.js';
import {
  decodeNumeric,
  gatherNumeric,
  encodeNumeric,
  plainColumn,
  ColumnDecodeError,
  type NumericArray,
  type PlainColumn,
  type TransformedColumn,
} from './column-codec.js';
import {
  ALL_COLUMNS,
  BLOCK,
  CaptureFileError,
  checksum,
  encodeBlockMeta,
  frameBlock,
  isAddressColumn,
  TCP_RST,
  type BlockIndex,
  ROW_ORDER,
  type ColumnEntry,
  withDependencies,
  type ColumnName,
} from './format.js';

// Streams this small are stored as they are: a compressor's frame would be larger.
const MIN_COMPRESS = 32;

const PREFERRED: Partial<Record<NumericColumn, 'delta' | 'rel'>> = { received: 'delta', start: 'rel', end: 'rel' };

/** Computes the index of rows [from, from+n) of a batch. */
export function indexRows(batch: FlowBatch, from: number, n: number): BlockIndex {
  // Columns in locals and no property read inside the loop: a read first reached on a rare
  // row (the first TCP reset) used to throw away the optimised loop, block after block.
  const { received, start, end, bytes, packets, proto, tcpFlags } = batch.cols;
  let receivedMin = Infinity;
  let receivedMax = -Infinity;
  let startMin = Infinity;
  let startMax = -Infinity;
  let endMin = Infinity;
  let endMax = -Infinity;
  let bytesSum = 0;
  let packetsSum = 0;
  let rstFlows = 0;
  for (let i = from; i < from + n; i++) {
    const r = received[i]!;
    const s = start[i]!;
    const e = end[i]!;
    if (r < receivedMin) receivedMin = r;
    if (r > receivedMax) receivedMax = r;
    if (s < startMin) startMin = s;
    if (s > startMax) startMax = s;
    if (e < endMin) endMin = e;
    if (e > endMax) endMax = e;
    bytesSum += bytes[i]!;
    packetsSum += packets[i]!;
    // TCP only, as nfdump's `flags R` and the KPI's denied_flows count it
    rstFlows += (tcpFlags[i]! & TCP_RST) !== 0 && proto[i] === 6 ? 1 : 0;
  }
  return {
    rows: n,
    receivedMin,
    receivedMax,
    startMin,
    startMax,
    endMin,
    endMax,
    bytesSum,
    packetsSum,
    rstFlows,
    rowOrder: ROW_ORDER.arrival,
  };
}

/**
 * Encodes rows [from, from+n) of `batch` as a framed data block (header included). `rowOrder`
 * states how those rows are ordered (ROW_ORDER; the caller's word, not checked here).
 */
export function encodeBlock(
  batch: FlowBatch,
  from: number,
  n: number,
  codec: ByteCodec,
  rowOrder: number = ROW_ORDER.arrival,
): { block: Buffer; index: BlockIndex } {
  const index = indexRows(batch, from, n);
  index.rowOrder = rowOrder;
  const entries: ColumnEntry[] = [];
  const streams: Uint8Array[] = [];
  const add = (id: number, t: TransformedColumn): void => {
    const compress = t.bytes.length >= MIN_COMPRESS;
    let stored = compress ? codec.compress(t.bytes) : t.bytes;
    let codecId = compress ? codec.id : 0;
    // Incompressible streams (rare: random data) are kept raw rather than grown.
    if (compress && stored.length >= t.bytes.length) {
      stored = t.bytes;
      codecId = 0;
    }
    entries.push({
      id,
      transform: t.transform,
      width: t.width,
      codec: codecId,
      rawLen: t.bytes.length,
      storedLen: stored.length,
      crc: checksum(stored),
      base: t.base,
      min: t.min,
      max: t.max,
      offset: 0,
    });
    streams.push(stored);
  };
  const c = batch.cols;
  ALL_COLUMNS.forEach((name, id) => {
    if (isAddressColumn(name)) {
      add(id, encodeAddresses(batch[name].subarray(from * 16, (from + n) * 16), n));
      return;
    }
    const values = c[name].subarray(from, from + n) as NumericArray;
    const kind = PREFERRED[name] ?? 'int';
    const ref =
      name === 'start' ? c.received.subarray(from, from + n) : name === 'end' ? c.start.subarray(from, from + n) : undefined;
    add(id, encodeNumeric(values, n, kind, ref));
  });
  const meta = encodeBlockMeta(index, entries);
  return { block: frameBlock(BLOCK.data, n, [meta, ...streams], meta), index };
}

/**
 * What both decoders need from a data block payload: its directory by column id, a
 * `bad-block` error for this block, and a column's stream checked (bounds, checksum,
 * codec) and decompressed.
 */
function columnStreams(
  payload: Buffer,
  columns: ColumnEntry[],
  codecs: CodecSet,
  path: string | undefined,
  offset: number | undefined,
): {
  byId: Map<number, ColumnEntry>;
  fail: (msg: string, cause?: unknown) => never;
  check: (e: ColumnEntry) => Uint8Array;
  stream: (e: ColumnEntry) => Uint8Array;
} {
  const byId = new Map<number, ColumnEntry>();
  for (const e of columns) byId.set(e.id, e);
  const fail = (msg: string, cause?: unknown): never => {
    throw new CaptureFileError('bad-block', msg, path, offset, { cause });
  };
  /** The column's stored bytes, in the block and matching their checksum. */
  const check = (e: ColumnEntry): Uint8Array => {
    if (e.offset + e.storedLen > payload.length) fail(`column ${e.id} runs past the block`);
    const stored = payload.subarray(e.offset, e.offset + e.storedLen);
    if (checksum(stored) !== e.crc) throw new CaptureFileError('bad-checksum', `column ${e.id} checksum mismatch`, path, offset);
    return stored;
  };
  const stream = (e: ColumnEntry): Uint8Array => {
    const stored = check(e);
    const codec = codecs.get(e.codec) ?? fail(`column ${e.id} uses unknown codec ${e.codec}`);
    try {
      return codec.decompress(stored, e.rawLen);
    } catch (err) {
      if (err instanceof CodecError) return fail(`column ${e.id}: ${err.message}`, err);
      throw err;
    }
  };
  return { byId, fail, check, stream };
}

/** Decodes the `wanted` columns (and those they are stored relative to) of a data block payload into `out` at row `at`. */
export function decodeBlockColumns(
  payload: Buffer,
  columns: ColumnEntry[],
  rows: number,
  wanted: ReadonlySet<ColumnName>,
  codecs: CodecSet,
  out: FlowBatch,
  at: number,
  path?: string,
  offset?: number,
): void {
  wanted = withDependencies([...wanted]);
  const { byId, fail, stream } = columnStreams(payload, columns, codecs, path, offset);
  const cols = out.cols;
  // Order matters: received before start before end (relative columns).
  for (const name of ALL_COLUMNS) {
    if (!wanted.has(name)) continue;
    const id = ALL_COLUMNS.indexOf(name);
    const e = byId.get(id);
    try {
      if (!isAddressColumn(name)) {
        const numeric: NumericColumn = name;
        const target = cols[numeric].subarray(at, at + rows) as NumericArray;
        if (!e) {
          target.fill(0);
          continue;
        }
        const ref =
          numeric === 'start'
            ? cols.received.subarray(at, at + rows)
            : numeric === 'end'
              ? cols.start.subarray(at, at + rows)
              : undefined;
        decodeNumeric(e, stream(e), rows, target, ref);
      } else {
        const target = out[name].subarray(at * 16, (at + rows) * 16);
        if (!e) {
          target.fill(0);
          continue;
        }
        decodeAddresses(e, stream(e), rows, target);
      }
    } catch (err) {
      if (err instanceof ColumnDecodeError) fail(`column ${name}: ${err.message}`, err);
      throw err;
    }
  }
}

/**
 * Decodes the `wanted` columns of only the rows in `idx` (ascending) of a
 * data block payload into rows `at …` of `out`: for picking the newest few
 * flows out of a large block without decoding all of it.
 */
export function decodeBlockRows(
  payload: Buffer,
  columns: ColumnEntry[],
  rows: number,
  idx: ArrayLike<number>,
  wanted: ReadonlySet<ColumnName>,
  codecs: CodecSet,
  out: FlowBatch,
  at: number,
  path?: string,
  offset?: number,
): void {
  wanted = withDependencies([...wanted]);
  const m = idx.length;
  out.reserve(at + m - out.length);
  if (out.length < at + m) out.length = at + m;
  const { byId, fail, stream } = columnStreams(payload, columns, codecs, path, offset);
  const cols = out.cols;
  for (const name of ALL_COLUMNS) {
    if (!wanted.has(name)) continue;
    const id = ALL_COLUMNS.indexOf(name);
    const e = byId.get(id);
    try {
      if (!isAddressColumn(name)) {
        const numeric: NumericColumn = name;
        const target = cols[numeric] as NumericArray;
        if (!e) {
          target.fill(0, at, at + m);
          continue;
        }
        const ref = numeric === 'start' ? cols.received : numeric === 'end' ? cols.start : undefined;
        gatherNumeric(e, stream(e), rows, idx, target, at, ref);
      } else {
        if (!e) {
          out[name].fill(0, at * 16, (at + m) * 16);
          continue;
        }
        gatherAddresses(e, stream(e), rows, idx, out[name], at);
      }
    } catch (err) {
      if (err instanceof ColumnDecodeError) fail(`column ${name}: ${err.message}`, err);
      throw err;
    }
  }
}

const plainScratch: Uint8Array[] = [];

/** `bytes` copied into the scratch buffer of position k (valid until the next plainBlockColumns call). */
function copyToScratch(k: number, bytes: Uint8Array): Uint8Array {
  let b = plainScratch[k];
  if (!b || b.length < bytes.length) {
    b = new Uint8Array(Math.max(bytes.length, 1024));
    plainScratch[k] = b;
  }
  const out = b.subarray(0, bytes.length);
  out.set(bytes);
  return out;
}

/**
 * The `wanted` numeric columns of a data block payload as stored (column-codec.ts's
 * PlainColumn), each stream checked and decompressed; a column the block lacks reads as 0, as
 * decoded. Undefined when one of them is an address column or is stored otherwise: the caller
 * decodes the block instead (and meets its damage, if that is why). The columns' bytes are
 * valid until the next call, and the last one's only until `codecs` decompresses again (a
 * readBlock of the same file): it is the codec's own buffer.
 */
export function plainBlockColumns(
  payload: Buffer,
  columns: ColumnEntry[],
  rows: number,
  wanted: readonly ColumnName[],
  codecs: CodecSet,
  path?: string,
  offset?: number,
): Map<ColumnName, PlainColumn> | undefined {
  const { byId, stream } = columnStreams(payload, columns, codecs, path, offset);
  const out = new Map<ColumnName, PlainColumn>();
  for (const [k, name] of wanted.entries()) {
    if (isAddressColumn(name)) return undefined;
    const e = byId.get(ALL_COLUMNS.indexOf(name));
    if (!e) {
      out.set(name, { width: 0, base: 0, bytes: new Uint8Array(0) });
      continue;
    }
    // A codec may hand back its own buffer, which its next stream overwrites: all but the last
    // are copied, into buffers kept for the next call (a fresh one per block cost more than the copy).
    const bytes = stream(e);
    const plain = plainColumn(e, k < wanted.length - 1 ? copyToScratch(k, bytes) : bytes, rows);
    if (!plain) return undefined;
    out.set(name, plain);
  }
  return out;
}

/**
 * Checks the stored streams of the `wanted` columns of a data block payload (bounds and
 * checksum, nothing decompressed): what a reader that takes a block's rows without decoding
 * them (all of them match) checks, so that a damaged block is skipped and counted as such
 * wherever it is read. Throws CaptureFileError.
 */
export function checkBlockColumns(
  payload: Buffer,
  columns: ColumnEntry[],
  wanted: readonly ColumnName[],
  codecs: CodecSet,
  path?: string,
  offset?: number,
): void {
  const { byId, check } = columnStreams(payload, columns, codecs, path, offset);
  for (const name of wanted) {
    const e = byId.get(ALL_COLUMNS.indexOf(name));
    if (e) check(e);
  }
}
