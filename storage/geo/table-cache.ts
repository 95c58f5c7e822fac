/**
 * The built tables of one kind kept as a file under `<dataDir>/geo/`, so that a process reads
 * 20 MiB of arrays (tens of ms) instead of parsing the CSVs (≈ 1 s CPU per kind) or listing a
 * MaxMind DB (several s). The file is named for its kind and a hash of its sources (paths,
 * sizes, modification times), so a changed source builds and writes a new one; older files of
 * that kind are removed then. A cache that cannot be read or written is only a slower start.
 *
 *   offset  size      field
 *   0       8         magic "NSGEOTB1"
 *   8       4         0x01020304 in the writer's byte order (a reader of the other order rebuilds)
 *   12      4         n4: IPv4 ranges            16      4   n6: IPv6 ranges
 *   20      4         reserved (0)
 *   24      4·n4 ×3   IPv4 starts, ends, values  (u32)
 *   …       16·n6 ×2  IPv6 starts, ends          (4 × u32 per address)
 *   …       4·n6      IPv6 values
 *
 * Written under a temporary name and renamed, so a reader never sees half a file.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { GeoKind, GeoTables } from './ip-location-db.js';
import { V4RangeTable, V6RangeTable } from './range-table.js';

const MAGIC = Buffer.from('NSGEOTB1', 'latin1');
const ORDER = 0x01020304;
const HEADER = 24;

/** A key for the files `paths`: their paths, sizes and modification times; '' when one cannot be read. */
export function sourceKey(paths: readonly string[]): string {
  try {
    return paths.map((p) => `${p}:${statSync(p).size}:${statSync(p).mtimeMs}`).join('|');
  } catch {
    return '';
  }
}

/** The tables of `kind` from the cache in `dir` when it holds them for `key`, else `build()`'s, then written there. */
export function cachedTables(dir: string, kind: GeoKind, key: string, build: () => GeoTables): GeoTables {
  if (key === '') return build();
  const name = `${kind}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.bin`;
  const path = join(dir, name);
  const read = readCache(path);
  if (read) return read;
  const tables = build();
  try {
    mkdirSync(dir, { recursive: true });
    // The warm-up worker (geo-warm.ts) and a query may build at once in one process: one file each.
    const tmp = `${path}.${process.pid}.${threadId}.tmp`;
    writeFileSync(tmp, encode(tables));
    renameSync(tmp, path);
    for (const old of readdirSync(dir)) if (old.startsWith(`${kind}-`) && old !== name) unlinkSync(join(dir, old));
  } catch {
    // A read-only or full data directory: the next process builds again.
  }
  return tables;
}

function encode(t: GeoTables): Buffer {
  const head = Buffer.alloc(HEADER);
  MAGIC.copy(head, 0);
  new Uint32Array(head.buffer, head.byteOffset + 8, 3).set([ORDER, t.v4.size, t.v6.size]);
  const part = (a: Uint32Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return Buffer.concat([
    head,
    part(t.v4.starts),
    part(t.v4.ends),
    part(t.v4.values),
    part(t.v6.starts),
    part(t.v6.ends),
    part(t.v6.values),
  ]);
}

function readCache(path: string): GeoTables | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return undefined;
  }
  if (buf.length < HEADER || !buf.subarray(0, 8).equals(MAGIC)) return undefined;
  // A copy on a fresh, aligned ArrayBuffer: the arrays below are views of it.
  const words = new Uint32Array(buf.length >> 2);
  new Uint8Array(words.buffer).set(buf.subarray(0, words.length * 4));
  const [order, n4, n6] = [words[2]!, words[3]!, words[4]!];
  if (order !== ORDER || buf.length !== HEADER + n4 * 12 + n6 * 36) return undefined;
  let w = HEADER >> 2;
  const take = (n: number): Uint32Array => {
    const a = words.subarray(w, w + n);
    w += n;
    return a;
  };
  const v4 = new V4RangeTable(take(n4), take(n4), take(n4));
  const v6 = new V6RangeTable(take(n6 * 4), take(n6 * 4), take(n6));
  return { v4, v6 };
}
