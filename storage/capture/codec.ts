/**
 * Byte compressors for capture-file column streams.
 *
 * Chosen by measurement (figures in bench/README.md): zstd level 3 over
 * shuffled/delta-encoded columns is within 1 % of level 6's size at about
 * twice its speed, and 20 % smaller than lz4 (which is barely faster here,
 * since the column transforms cost more than either compressor); `none` is
 * for debugging and tests. Each column records the codec it was written with, so
 * a reader decodes any mix.
 */
import { Compressor } from 'zstd-napi';
import zstdBinding from 'zstd-napi/binding.js';
import { compressSync as lz4Compress, uncompressSync as lz4Uncompress } from 'lz4-napi';

/** Codec identifiers as stored in a column directory entry. */
export const CODEC_IDS = { none: 0, zstd: 1, lz4: 2 } as const;

/** Codec names accepted by the configuration. */
export type CodecName = keyof typeof CODEC_IDS;

/** Compresses and decompresses one column stream. */
export interface ByteCodec {
  readonly name: CodecName;
  readonly id: number;
  compress(src: Uint8Array): Uint8Array;
  /**
   * `rawLen` is the length recorded at write time; a mismatch is an error. The bytes answered
   * may be the codec's own, reused by its next call: read them before decompressing again.
   */
  decompress(src: Uint8Array, rawLen: number): Uint8Array;
}

/** A stored stream did not decompress to its recorded length. */
export class CodecError extends Error {
  override readonly name = 'CodecError';
}

class NoneCodec implements ByteCodec {
  readonly name = 'none' as const;
  readonly id = CODEC_IDS.none;
  compress(src: Uint8Array): Uint8Array {
    return src;
  }
  decompress(src: Uint8Array, rawLen: number): Uint8Array {
    if (src.length !== rawLen) throw new CodecError(`stored ${src.length} bytes, expected ${rawLen}`);
    return src;
  }
}

/** Streams up to this long are decompressed into one buffer the codec keeps (a block's column is far smaller). */
const KEPT_OUTPUT = 2 << 20;
/** Longer than any column of the largest block (2^20 rows of 17 bytes): a damaged or hostile directory. */
const MAX_STREAM = 32 << 20;

class ZstdCodec implements ByteCodec {
  readonly name = 'zstd' as const;
  readonly id = CODEC_IDS.zstd;
  // One context each, reused: creating a zstd context per column costs more than compressing a small one.
  private readonly cctx = new Compressor();
  private readonly dctx = new zstdBinding.DCtx();
  // Decompressed into this, reused: a fresh buffer per column cost a page fault per 4 KiB written.
  private output = Buffer.alloc(0);
  constructor(level: number) {
    this.cctx.setParameters({ compressionLevel: level, checksumFlag: false, contentSizeFlag: true });
  }
  compress(src: Uint8Array): Uint8Array {
    return this.cctx.compress(src);
  }
  decompress(src: Uint8Array, rawLen: number): Uint8Array {
    if (rawLen > MAX_STREAM) throw new CodecError(`zstd stream of ${rawLen} bytes is longer than any column`);
    if (rawLen > KEPT_OUTPUT) return this.decompressInto(Buffer.allocUnsafe(rawLen), src, rawLen);
    if (this.output.length < rawLen)
      this.output = Buffer.allocUnsafe(Math.min(KEPT_OUTPUT, Math.max(rawLen, 2 * this.output.length)));
    return this.decompressInto(this.output.subarray(0, rawLen), src, rawLen);
  }
  private decompressInto(out: Buffer, src: Uint8Array, rawLen: number): Buffer {
    let n: number;
    try {
      // Fails when the frames hold more than rawLen bytes (the buffer is too small).
      n = this.dctx.decompress(out, src);
    } catch (err) {
      throw new CodecError(`zstd: ${(err as Error).message}`, { cause: err });
    }
    if (n !== rawLen) throw new CodecError(`zstd gave ${n} bytes, expected ${rawLen}`);
    return out;
  }
}

class Lz4Codec implements ByteCodec {
  readonly name = 'lz4' as const;
  readonly id = CODEC_IDS.lz4;
  compress(src: Uint8Array): Uint8Array {
    return lz4Compress(Buffer.from(src.buffer, src.byteOffset, src.byteLength));
  }
  decompress(src: Uint8Array, rawLen: number): Uint8Array {
    let out: Uint8Array;
    try {
      out = lz4Uncompress(src);
    } catch (err) {
      throw new CodecError(`lz4: ${(err as Error).message}`, { cause: err });
    }
    if (out.length !== rawLen) throw new CodecError(`lz4 gave ${out.length} bytes, expected ${rawLen}`);
    return out;
  }
}

/** Builds the codec for writing; `level` applies to zstd only. */
export function createCodec(name: CodecName, level = 3): ByteCodec {
  switch (name) {
    case 'zstd':
      return new ZstdCodec(level);
    case 'lz4':
      return new Lz4Codec();
    case 'none':
      return new NoneCodec();
  }
}

/** Decoders for every codec id, for readers (which meet whatever the writer chose). */
export class CodecSet {
  private readonly byId = new Map<number, ByteCodec>();
  /** Returns the decoder for a stored codec id, or undefined for an id this build does not know. */
  get(id: number): ByteCodec | undefined {
    let codec = this.byId.get(id);
    if (codec) return codec;
    if (id === CODEC_IDS.none) codec = new NoneCodec();
    else if (id === CODEC_IDS.zstd) codec = new ZstdCodec(3);
    else if (id === CODEC_IDS.lz4) codec = new Lz4Codec();
    if (codec) this.byId.set(id, codec);
    return codec;
  }
}
