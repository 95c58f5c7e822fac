/**
 * Writes a small MaxMind DB (format 2.0, IPv6 tree, 32-bit records) for the tests: no npm
 * package writes the format, and a file of a few networks is enough to check that a user's
 * database overrides the shipped tables. What it writes is read back by mmdb-lib, the reader
 * the service uses, so a mistake here fails the tests rather than passing them.
 *
 * Layout (MaxMind DB spec): search tree (node_count × 8 bytes: left, right as u32 BE),
 * 16 zero bytes, data section, "\xAB\xCD\xEFMaxMind.com", metadata map.
 */

/** A value the data section can hold (the subset the tests need). */
export type MmdbValue = string | number | { [key: string]: MmdbValue } | MmdbValue[];

/** One network: its address as 16 bytes (IPv4 as ::a.b.c.d, i.e. zero-padded, as MaxMind stores it) and prefix length 0–128. */
export interface MmdbNetwork {
  address: Uint8Array;
  prefix: number;
  record: { [key: string]: MmdbValue };
}

interface TrieNode {
  child: [TrieNode | number | undefined, TrieNode | number | undefined]; // a node, or a data index
}

/** The 16-byte form of an IPv4 address in an IPv6 MaxMind tree (::a.b.c.d). */
export function v4InTree(dotted: string): Uint8Array {
  const out = new Uint8Array(16);
  dotted.split('.').forEach((o, i) => (out[12 + i] = Number(o)));
  return out;
}

/** The 16 bytes of a full or `::`-shortened IPv6 address (no embedded IPv4). */
export function v6Bytes(text: string): Uint8Array {
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  });
  return out;
}

/** The bytes of a MaxMind DB holding `networks` (later ones overwrite earlier ones where they nest). */
export function writeMmdb(networks: readonly MmdbNetwork[], databaseType = 'netsvc-test'): Buffer {
  const root: TrieNode = { child: [undefined, undefined] };
  const records: { [key: string]: MmdbValue }[] = [];
  for (const net of networks) {
    const data = records.push(net.record) - 1;
    let node = root;
    for (let depth = 0; depth < net.prefix; depth++) {
      const bit = (net.address[depth >> 3]! >> (7 - (depth & 7))) & 1;
      if (depth === net.prefix - 1) {
        node.child[bit] = data;
        break;
      }
      const next = node.child[bit];
      if (typeof next === 'object') {
        node = next;
      } else {
        // A data leaf above a more specific network: push its record down both sides.
        const made: TrieNode = { child: [next, next] };
        node.child[bit] = made;
        node = made;
      }
    }
  }
  // Number the nodes breadth-first (root = 0).
  const order: TrieNode[] = [root];
  for (let i = 0; i < order.length; i++) {
    for (const c of order[i]!.child) if (typeof c === 'object') order.push(c);
  }
  const index = new Map(order.map((n, i) => [n, i]));
  const nodeCount = order.length;

  const dataParts: Buffer[] = [];
  const dataOffsets: number[] = [];
  let dataSize = 0;
  for (const rec of records) {
    const enc = encode(rec);
    dataOffsets.push(dataSize);
    dataParts.push(enc);
    dataSize += enc.length;
  }
  const tree = Buffer.alloc(nodeCount * 8);
  order.forEach((n, i) => {
    n.child.forEach((c, side) => {
      const value = c === undefined ? nodeCount : typeof c === 'number' ? nodeCount + 16 + dataOffsets[c]! : index.get(c)!;
      tree.writeUInt32BE(value, i * 8 + side * 4);
    });
  });
  const metadata = encode({
    node_count: { uint32: nodeCount },
    record_size: { uint16: 32 },
    ip_version: { uint16: 6 },
    database_type: databaseType,
    languages: ['en'],
    binary_format_major_version: { uint16: 2 },
    binary_format_minor_version: { uint16: 0 },
    build_epoch: { uint64: Math.floor(Date.UTC(2026, 10, 26) / 1000) },
    description: { en: 'netsvc test database' },
  } as unknown as MmdbValue);
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...dataParts,
    Buffer.from([0xab, 0xcd, 0xef]),
    Buffer.from('MaxMind.com', 'latin1'),
    metadata,
  ]);
}

function control(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) {
    sizeBits = 29;
    extra.push(size - 29);
  } else {
    sizeBits = 30;
    const s = size - 285;
    extra.push(s >> 8, s & 0xff);
  }
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7); // extended type
  return Buffer.from([...head, ...extra]);
}

function uint(type: number, n: number): Buffer {
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
}

/** Encodes a value; numbers are uint32, and `{ uint16: n }` / `{ uint32: n }` / `{ uint64: n }` pick a width. */
function encode(v: MmdbValue): Buffer {
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([control(2, b.length), b]);
  }
  if (typeof v === 'number') return uint(6, v);
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map(encode)]);
  const keys = Object.keys(v);
  if (keys.length === 1 && typeof v[keys[0]!] === 'number') {
    const width = keys[0];
    if (width === 'uint16') return uint(5, v.uint16 as number);
    if (width === 'uint32') return uint(6, v.uint32 as number);
    if (width === 'uint64') return uint(9, v.uint64 as number);
  }
  return Buffer.concat([control(7, keys.length), ...keys.flatMap((k) => [encode(k), encode(v[k]!)])]);
}
