/**
 * The netsvc capture file: one file per flow source per hour.
 *
 * This file stays whole (≈ 520 lines): it is the format's single definition,
 * the diagram below and the code that encodes and decodes each structure in
 * it side by side, as nfdump keeps nffileV2.h. File names and hours are in
 * file-names.ts.
 *
 *   <dataDir>/flows/<source>/nfcapd.YYYYMMDDHHmm            sealed hour (local time of `timezone`)
 *   <dataDir>/flows/<source>/nfcapd.current.YYYYMMDDHHmm    the open hour, being appended to
 *   <dataDir>/flows/<source>/nfcapd.sealing.YYYYMMDDHHmm    compacted copy being written at seal
 *
 * All integers little-endian. The magic reads 0x4643534E ("NSCF" as bytes)
 * in the writer's order and 0x4E534346 in the other, so a reader knows the
 * byte order from the first four bytes (as nfdump's 0xA50C does).
 *
 *  offset
 *  0 ┌──────────────────────────── file header (headerSize bytes, multiple of 8) ─┐
 *    │ u32 magic 0x4643534E   u16 version=1   u16 headerSize                       │
 *    │ f64 hourStart (ms since epoch, UTC)    u32 intervalSec   u8 codec (default) │
 *    │ u8 sourceLen   u16 flags   f64 createdAt (ms)   u32 crc32   u32 reserved    │
 *    │ source name (UTF-8, sourceLen bytes), zero padded                           │
 *    ├──────────────────────────── block ──────────────────────────────────────────┤
 *    │ u16 type   u16 flags   u32 size (payload bytes)   u32 crc32   u32 aux       │  16-byte block header
 *    │ payload (size bytes)                                                        │  unknown types: skip size
 *    ├──────────────────────────── block … ────────────────────────────────────────┤
 *    │ DATA (type 1, aux = rows); crc32 covers index + directory                   │
 *    │   index 80 B: u32 rows  u16 ncols  u16 metaSize                             │
 *    │     f64 receivedMin/Max  f64 startMin/Max  f64 endMin/Max                   │
 *    │     f64 bytesSum  f64 packetsSum  u32 rstFlows (TCP)  u32 rowOrder          │
 *    │   directory, ncols × 40 B:                                                  │
 *    │     u8 columnId  u8 transform  u8 width  u8 codec                           │
 *    │     u32 rawLen  u32 storedLen  u32 crc32(stored bytes)                      │
 *    │     f64 base  f64 min  f64 max                                              │
 *    │   column streams, in directory order (each compressed on its own)           │
 *    ├─────────────────────────────────────────────────────────────────────────────┤
 *    │ FOOTER (type 2, aux = block count; sealed files only); crc32 covers payload │
 *    │   totals 168 B: f64 flows,bytes,packets × (all, tcp, udp, icmp, other)      │
 *    │     f64 first (start min)  f64 last (end max)  f64 receivedMin/Max          │
 *    │     f64 rstFlows  u32 blocks  u32 recoveredDroppedBytes                     │
 *    │   block directory, blocks × 64 B:                                           │
 *    │     f64 offset  u32 size (with header)  u32 rows                            │
 *    │     f64 receivedMin/Max  f64 startMin/Max  f64 endMin/Max                   │
 *    ├─────────────────────────────────────────────────────────────────────────────┤
 *    │ TRAILER (type 3, last 32 bytes of a sealed file); crc32 covers payload      │
 *    │   f64 footerOffset   u32 magic 0x45435346 ("FSCE")   u32 reserved           │
 *    └─────────────────────────────────────────────────────────────────────────────┘
 *
 * Every block is appended with one positioned write, so a crash leaves at
 * most one torn block at the tail; recovery keeps every block whose checksums
 * hold and drops the rest. Column ids are the positions in ALL_COLUMNS: the
 * numeric columns received … dstAs (0-15), the addresses (16-19), then
 * bytesRest and packetsRest (20, 21: what makes a byte or packet count above
 * 2^53 exact, bytes + bytesRest; see common/flow-batch.ts). A reader
 * ignores ids it does not know and zero-fills columns a block lacks, so
 * adding a column needs no version: files written before 20 and 21 existed
 * read them as 0 (their counts were float64 already), and older readers skip
 * them (and see counts above 2^53 rounded, as they always did).
 */
import { crc32 } from 'node:zlib';
import type { AddressColumn, NumericColumn } from '../../common/flow-batch.js';

/** First four bytes of a capture file, as a little-endian u32. */
export const MAGIC = 0x4643534e;
/** MAGIC as read by the opposite byte order. */
export const MAGIC_SWAPPED = 0x4e534346;
/** Trailer magic, as a little-endian u32. */
export const TRAILER_MAGIC = 0x45435346;
/** Format version written by this build. */
export const VERSION = 1;
/** Capture interval: one file per hour. */
export const INTERVAL_SEC = 3600;

/** Block types. */
export const BLOCK = { data: 1, footer: 2, trailer: 3 } as const;

/** Bytes of a block header. */
export const BLOCK_HEADER_SIZE = 16;
/** Bytes of a data block's index. */
export const INDEX_SIZE = 80;
/** Bytes of one column directory entry. */
export const DIR_ENTRY_SIZE = 40;
/** Bytes of the footer's totals. */
export const TOTALS_SIZE = 168;
/** Bytes of one footer block-directory entry. */
export const FOOTER_ENTRY_SIZE = 64;
/** Bytes of the trailer block, header included. */
export const TRAILER_SIZE = BLOCK_HEADER_SIZE + 16;
/** Fixed part of the file header, before the source name. */
export const HEADER_FIXED_SIZE = 40;

/** Any column of a FlowBatch. */
export type ColumnName = NumericColumn | AddressColumn;

/** Every column, in column-id order: the id stored in a file is the index here, so new columns go at the end. */
export const ALL_COLUMNS: readonly ColumnName[] = [
  'received',
  'start',
  'end',
  'bytes',
  'packets',
  'srcPort',
  'dstPort',
  'proto',
  'tcpFlags',
  'tos',
  'ipVersion',
  'samplingInterval',
  'inputIf',
  'outputIf',
  'srcAs',
  'dstAs',
  'srcAddr',
  'dstAddr',
  'nextHop',
  'exporter',
  'bytesRest',
  'packetsRest',
];

/** Column id of a column name. */
export function columnId(name: ColumnName): number {
  return ALL_COLUMNS.indexOf(name);
}

/** True for the 16-byte address columns. */
export function isAddressColumn(name: ColumnName): name is AddressColumn {
  return name === 'srcAddr' || name === 'dstAddr' || name === 'nextHop' || name === 'exporter';
}

/** Why a capture file or block cannot be read. */
export type CaptureErrorCode =
  'bad-magic' | 'wrong-byte-order' | 'unsupported-version' | 'bad-header' | 'truncated' | 'bad-checksum' | 'bad-block' | 'io';

/** A capture file (or one of its blocks) is damaged or unreadable; `code` says how. */
export class CaptureFileError extends Error {
  override readonly name = 'CaptureFileError';
  constructor(
    readonly code: CaptureErrorCode,
    message: string,
    readonly path?: string,
    readonly offset?: number,
    options?: { cause?: unknown },
  ) {
    super(path ? `${path}: ${message}` : message, options);
  }
}

/** The file header. */
export interface FileHeader {
  version: number;
  headerSize: number;
  hourStart: number;
  intervalSec: number;
  codec: number;
  source: string;
  createdAt: number;
}

/** Per-block index: what a reader needs to skip a block without decoding it. */
export interface BlockIndex {
  rows: number;
  receivedMin: number;
  receivedMax: number;
  startMin: number;
  startMax: number;
  endMin: number;
  endMax: number;
  bytesSum: number;
  packetsSum: number;
  rstFlows: number;
  /** How the block's rows are ordered (ROW_ORDER). */
  rowOrder: number;
}

/**
 * Row orders a data block's index can state. `arrival`: as received (what the
 * writer appends; 0, as every block written before this field existed says).
 * `protoDstPort`: ascending by protocol, then destination port (how sealing
 * writes the blocks it merges, block-order.ts): a reader may then find a
 * protocol's or a port's rows by bisection instead of testing every row.
 * A reader that does not know a value reads the block as unordered.
 */
export const ROW_ORDER = { arrival: 0, protoDstPort: 1 } as const;

/** One column directory entry of a data block. */
export interface ColumnEntry {
  id: number;
  transform: number;
  width: number;
  codec: number;
  rawLen: number;
  storedLen: number;
  crc: number;
  base: number;
  min: number;
  max: number;
  /** Offset of the stored stream from the start of the block payload. */
  offset: number;
}

/** A data block located in a file. */
export interface BlockLocation extends Omit<BlockIndex, 'bytesSum' | 'packetsSum' | 'rstFlows' | 'rowOrder'> {
  /** File offset of the block header. */
  offset: number;
  /** Bytes of the block, header included. */
  size: number;
}

/** The directory entry of the data block at `offset`, `size` bytes with its header, from the block's index. */
export function blockLocation(offset: number, size: number, ix: BlockIndex): BlockLocation {
  return {
    offset,
    size,
    rows: ix.rows,
    receivedMin: ix.receivedMin,
    receivedMax: ix.receivedMax,
    startMin: ix.startMin,
    startMax: ix.startMax,
    endMin: ix.endMin,
    endMax: ix.endMax,
  };
}

/** Flow, byte and packet counts of one protocol class. */
export interface Counts {
  flows: number;
  bytes: number;
  packets: number;
}

/** Totals kept in the footer (what `nfdump -I` prints). */
export interface FileTotals {
  all: Counts;
  tcp: Counts;
  udp: Counts;
  icmp: Counts;
  other: Counts;
  first: number;
  last: number;
  receivedMin: number;
  receivedMax: number;
  rstFlows: number;
  blocks: number;
  recoveredDroppedBytes: number;
}

/** TCP RST bit. */
export const TCP_RST = 0x04;

function pad8(n: number): number {
  return (n + 7) & ~7;
}

/** Encodes the file header. */
export function encodeHeader(h: Omit<FileHeader, 'version' | 'headerSize'>): Buffer {
  const name = Buffer.from(h.source, 'utf8');
  if (name.length > 255) throw new RangeError('source name longer than 255 bytes');
  const size = pad8(HEADER_FIXED_SIZE + name.length);
  const b = Buffer.alloc(size);
  b.writeUInt32LE(MAGIC, 0);
  b.writeUInt16LE(VERSION, 4);
  b.writeUInt16LE(size, 6);
  b.writeDoubleLE(h.hourStart, 8);
  b.writeUInt32LE(h.intervalSec, 16);
  b.writeUInt8(h.codec, 20);
  b.writeUInt8(name.length, 21);
  b.writeUInt16LE(0, 22);
  b.writeDoubleLE(h.createdAt, 24);
  name.copy(b, HEADER_FIXED_SIZE);
  b.writeUInt32LE(crc32(b), 32);
  return b;
}

/** Decodes the file header from at least its first `headerSize` bytes; throws CaptureFileError. */
export function decodeHeader(b: Buffer, path?: string): FileHeader {
  if (b.length < HEADER_FIXED_SIZE) throw new CaptureFileError('truncated', 'shorter than a file header', path, 0);
  const magic = b.readUInt32LE(0);
  if (magic === MAGIC_SWAPPED) throw new CaptureFileError('wrong-byte-order', 'written in the other byte order', path, 0);
  if (magic !== MAGIC) throw new CaptureFileError('bad-magic', 'not a netsvc capture file (bad magic)', path, 0);
  const version = b.readUInt16LE(4);
  if (version !== VERSION)
    throw new CaptureFileError('unsupported-version', `format version ${version} is not supported`, path, 4);
  const headerSize = b.readUInt16LE(6);
  const sourceLen = b.readUInt8(21);
  if (headerSize < HEADER_FIXED_SIZE + sourceLen || headerSize % 8 !== 0) {
    throw new CaptureFileError('bad-header', `header size ${headerSize} is invalid`, path, 6);
  }
  if (b.length < headerSize) throw new CaptureFileError('truncated', 'header cut short', path, 0);
  const copy = Buffer.from(b.subarray(0, headerSize));
  const stored = copy.readUInt32LE(32);
  copy.writeUInt32LE(0, 32);
  if (crc32(copy) !== stored) throw new CaptureFileError('bad-checksum', 'header checksum mismatch', path, 0);
  return {
    version,
    headerSize,
    hourStart: b.readDoubleLE(8),
    intervalSec: b.readUInt32LE(16),
    codec: b.readUInt8(20),
    source: b.toString('utf8', HEADER_FIXED_SIZE, HEADER_FIXED_SIZE + sourceLen),
    createdAt: b.readDoubleLE(24),
  };
}

/** A decoded block header. */
export interface BlockHeader {
  type: number;
  flags: number;
  size: number;
  crc: number;
  aux: number;
}

/** Encodes a block header. */
export function encodeBlockHeader(h: BlockHeader, into: Buffer, at = 0): void {
  into.writeUInt16LE(h.type, at);
  into.writeUInt16LE(h.flags, at + 2);
  into.writeUInt32LE(h.size, at + 4);
  into.writeUInt32LE(h.crc >>> 0, at + 8);
  into.writeUInt32LE(h.aux >>> 0, at + 12);
}

/** Decodes a block header at `at`. */
export function decodeBlockHeader(b: Buffer, at = 0): BlockHeader {
  return {
    type: b.readUInt16LE(at),
    flags: b.readUInt16LE(at + 2),
    size: b.readUInt32LE(at + 4),
    crc: b.readUInt32LE(at + 8),
    aux: b.readUInt32LE(at + 12),
  };
}

/** Encodes a data block's index + directory (the "meta" its header checksum covers). */
export function encodeBlockMeta(index: BlockIndex, columns: ColumnEntry[]): Buffer {
  const metaSize = INDEX_SIZE + columns.length * DIR_ENTRY_SIZE;
  const b = Buffer.alloc(metaSize);
  b.writeUInt32LE(index.rows, 0);
  b.writeUInt16LE(columns.length, 4);
  b.writeUInt16LE(metaSize, 6);
  b.writeDoubleLE(index.receivedMin, 8);
  b.writeDoubleLE(index.receivedMax, 16);
  b.writeDoubleLE(index.startMin, 24);
  b.writeDoubleLE(index.startMax, 32);
  b.writeDoubleLE(index.endMin, 40);
  b.writeDoubleLE(index.endMax, 48);
  b.writeDoubleLE(index.bytesSum, 56);
  b.writeDoubleLE(index.packetsSum, 64);
  b.writeUInt32LE(index.rstFlows, 72);
  b.writeUInt32LE(index.rowOrder, 76);
  columns.forEach((c, i) => {
    const o = INDEX_SIZE + i * DIR_ENTRY_SIZE;
    b.writeUInt8(c.id, o);
    b.writeUInt8(c.transform, o + 1);
    b.writeUInt8(c.width, o + 2);
    b.writeUInt8(c.codec, o + 3);
    b.writeUInt32LE(c.rawLen, o + 4);
    b.writeUInt32LE(c.storedLen, o + 8);
    b.writeUInt32LE(c.crc >>> 0, o + 12);
    b.writeDoubleLE(c.base, o + 16);
    b.writeDoubleLE(c.min, o + 24);
    b.writeDoubleLE(c.max, o + 32);
  });
  return b;
}

/** Decodes a data block's meta from the start of its payload; checks sizes, not checksums. */
export function decodeBlockMeta(
  b: Buffer,
  payloadSize: number,
  path?: string,
  offset?: number,
): { index: BlockIndex; columns: ColumnEntry[]; metaSize: number } {
  if (b.length < INDEX_SIZE) throw new CaptureFileError('bad-block', 'block shorter than its index', path, offset);
  const ncols = b.readUInt16LE(4);
  const metaSize = b.readUInt16LE(6);
  if (metaSize !== INDEX_SIZE + ncols * DIR_ENTRY_SIZE || metaSize > payloadSize || b.length < metaSize) {
    throw new CaptureFileError('bad-block', 'block directory size is inconsistent', path, offset);
  }
  const index: BlockIndex = {
    rows: b.readUInt32LE(0),
    receivedMin: b.readDoubleLE(8),
    receivedMax: b.readDoubleLE(16),
    startMin: b.readDoubleLE(24),
    startMax: b.readDoubleLE(32),
    endMin: b.readDoubleLE(40),
    endMax: b.readDoubleLE(48),
    bytesSum: b.readDoubleLE(56),
    packetsSum: b.readDoubleLE(64),
    rstFlows: b.readUInt32LE(72),
    rowOrder: b.readUInt32LE(76),
  };
  const columns: ColumnEntry[] = [];
  let at = metaSize;
  for (let i = 0; i < ncols; i++) {
    const o = INDEX_SIZE + i * DIR_ENTRY_SIZE;
    const storedLen = b.readUInt32LE(o + 8);
    columns.push({
      id: b.readUInt8(o),
      transform: b.readUInt8(o + 1),
      width: b.readUInt8(o + 2),
      codec: b.readUInt8(o + 3),
      rawLen: b.readUInt32LE(o + 4),
      storedLen,
      crc: b.readUInt32LE(o + 12),
      base: b.readDoubleLE(o + 16),
      min: b.readDoubleLE(o + 24),
      max: b.readDoubleLE(o + 32),
      offset: at,
    });
    at += storedLen;
  }
  if (at !== payloadSize) throw new CaptureFileError('bad-block', 'column sizes do not add up to the block size', path, offset);
  return { index, columns, metaSize };
}

/** Empty totals. */
export function emptyTotals(): FileTotals {
  const z = (): Counts => ({ flows: 0, bytes: 0, packets: 0 });
  return {
    all: z(),
    tcp: z(),
    udp: z(),
    icmp: z(),
    other: z(),
    first: 0,
    last: 0,
    receivedMin: 0,
    receivedMax: 0,
    rstFlows: 0,
    blocks: 0,
    recoveredDroppedBytes: 0,
  };
}

const CLASSES = ['all', 'tcp', 'udp', 'icmp', 'other'] as const;

/** Encodes the footer payload: totals then the block directory. */
export function encodeFooter(t: FileTotals, blocks: BlockLocation[]): Buffer {
  const b = Buffer.alloc(TOTALS_SIZE + blocks.length * FOOTER_ENTRY_SIZE);
  let o = 0;
  for (const k of CLASSES) {
    b.writeDoubleLE(t[k].flows, o);
    b.writeDoubleLE(t[k].bytes, o + 8);
    b.writeDoubleLE(t[k].packets, o + 16);
    o += 24;
  }
  b.writeDoubleLE(t.first, 120);
  b.writeDoubleLE(t.last, 128);
  b.writeDoubleLE(t.receivedMin, 136);
  b.writeDoubleLE(t.receivedMax, 144);
  b.writeDoubleLE(t.rstFlows, 152);
  b.writeUInt32LE(blocks.length, 160);
  b.writeUInt32LE(Math.min(t.recoveredDroppedBytes, 0xffffffff), 164);
  blocks.forEach((blk, i) => {
    const e = TOTALS_SIZE + i * FOOTER_ENTRY_SIZE;
    b.writeDoubleLE(blk.offset, e);
    b.writeUInt32LE(blk.size, e + 8);
    b.writeUInt32LE(blk.rows, e + 12);
    b.writeDoubleLE(blk.receivedMin, e + 16);
    b.writeDoubleLE(blk.receivedMax, e + 24);
    b.writeDoubleLE(blk.startMin, e + 32);
    b.writeDoubleLE(blk.startMax, e + 40);
    b.writeDoubleLE(blk.endMin, e + 48);
    b.writeDoubleLE(blk.endMax, e + 56);
  });
  return b;
}

/** Decodes a footer payload. */
export function decodeFooter(b: Buffer, path?: string): { totals: FileTotals; blocks: BlockLocation[] } {
  if (b.length < TOTALS_SIZE) throw new CaptureFileError('bad-block', 'footer shorter than its totals', path);
  const t = emptyTotals();
  let o = 0;
  for (const k of CLASSES) {
    t[k] = { flows: b.readDoubleLE(o), bytes: b.readDoubleLE(o + 8), packets: b.readDoubleLE(o + 16) };
    o += 24;
  }
  t.first = b.readDoubleLE(120);
  t.last = b.readDoubleLE(128);
  t.receivedMin = b.readDoubleLE(136);
  t.receivedMax = b.readDoubleLE(144);
  t.rstFlows = b.readDoubleLE(152);
  t.blocks = b.readUInt32LE(160);
  t.recoveredDroppedBytes = b.readUInt32LE(164);
  if (b.length !== TOTALS_SIZE + t.blocks * FOOTER_ENTRY_SIZE) {
    throw new CaptureFileError('bad-block', 'footer block count does not match its size', path);
  }
  const blocks: BlockLocation[] = [];
  for (let i = 0; i < t.blocks; i++) {
    const e = TOTALS_SIZE + i * FOOTER_ENTRY_SIZE;
    blocks.push({
      offset: b.readDoubleLE(e),
      size: b.readUInt32LE(e + 8),
      rows: b.readUInt32LE(e + 12),
      receivedMin: b.readDoubleLE(e + 16),
      receivedMax: b.readDoubleLE(e + 24),
      startMin: b.readDoubleLE(e + 32),
      startMax: b.readDoubleLE(e + 40),
      endMin: b.readDoubleLE(e + 48),
      endMax: b.readDoubleLE(e + 56),
    });
  }
  return { totals: t, blocks };
}

/** Builds a whole block (header + payload) with its checksum over `checked`. */
export function frameBlock(type: number, aux: number, parts: Uint8Array[], checked: Uint8Array): Buffer {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = Buffer.allocUnsafe(BLOCK_HEADER_SIZE + size);
  encodeBlockHeader({ type, flags: 0, size, crc: crc32(checked), aux }, out, 0);
  let at = BLOCK_HEADER_SIZE;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Encodes the trailer block pointing at the footer. */
export function encodeTrailer(footerOffset: number): Buffer {
  const payload = Buffer.alloc(16);
  payload.writeDoubleLE(footerOffset, 0);
  payload.writeUInt32LE(TRAILER_MAGIC, 8);
  return frameBlock(BLOCK.trailer, 0, [payload], payload);
}

/** Checksum helper shared by writer and reader. */
export function checksum(data: Uint8Array): number {
  return crc32(data) >>> 0;
}

/** Column names a block needs decoded to produce `wanted` (relative columns pull their reference in). */
export function withDependencies(wanted: readonly ColumnName[]): Set<ColumnName> {
  const out = new Set<ColumnName>(wanted);
  if (out.has('end')) out.add('start');
  if (out.has('start')) out.add('received');
  return out;
}
