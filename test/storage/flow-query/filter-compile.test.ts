import { describe, expect, it } from 'vitest';
import { COLUMN_TYPES, FlowBatch, NUMERIC_COLUMNS, type NumericColumn } from '../../../common/flow-batch.js';
import { decodeBlockColumns, encodeBlock, plainBlockColumns } from '../../../storage/capture/block-codec.js';
import { CodecSet, createCodec } from '../../../storage/capture/codec.js';
import { decodeNumeric, TRANSFORM, type NumericArray, type PlainColumn } from '../../../storage/capture/column-codec.js';
import { BLOCK_HEADER_SIZE, decodeBlockMeta, type ColumnName } from '../../../storage/capture/format.js';
import type { Direction, FilterExpr, IpNet, NumberTest } from '../../../storage/flow-query/filter-ast.js';
import {
  compileFilter,
  directoryStats,
  FilterCompileError,
  type BlockStats,
  type CompiledFilter,
  type FilterEnv,
} from '../../../storage/flow-query/filter-compile.js';
import { parseFilter } from '../../../storage/flow-query/filter-parse.js';
import type { GeoLookup } from '../../../storage/geo/geo-lookup.js';
import { xorshift } from '../../helpers/xorshift.js';
import { realStats } from './block-stats.js';

/** The row's address as four big-endian words. */
function beWords(col: Uint8Array, row: number): number[] {
  const v = new DataView(col.buffer, col.byteOffset + row * 16, 16);
  return [v.getUint32(0), v.getUint32(4), v.getUint32(8), v.getUint32(12)];
}

function inNet(col: Uint8Array, row: number, net: IpNet): boolean {
  const w = beWords(col, row);
  return w.every((x, j) => (x & net.mask[j]!) >>> 0 === (net.words[j]! & net.mask[j]!) >>> 0);
}

function testNumber(v: number, t: NumberTest): boolean {
  switch (t.op) {
    case 'eq':
      return v === t.value;
    case 'gt':
      return v > t.value;
    case 'lt':
      return v < t.value;
    case 'ge':
      return v >= t.value;
    case 'le':
      return v <= t.value;
    case 'in':
      return t.values.includes(v);
  }
}

function directed(d: Direction, f: (side: 'src' | 'dst') => boolean): boolean {
  return d === 'src' ? f('src') : d === 'dst' ? f('dst') : d === 'either' ? f('src') || f('dst') : f('src') && f('dst');
}

/** A plain row-at-a-time interpreter of the tree, written apart from the compiler, to check it. */
function matches(e: FilterExpr, b: FlowBatch, i: number, env: FilterEnv, negated = false): boolean {
  const c = b.cols;
  const addr = (s: 'src' | 'dst'): Uint8Array => (s === 'src' ? b.srcAddr : b.dstAddr);
  switch (e.kind) {
    case 'and':
      return e.operands.every((o) => matches(o, b, i, env, negated));
    case 'or':
      return e.operands.some((o) => matches(o, b, i, env, negated));
    case 'not':
      return !matches(e.operand, b, i, env, !negated);
    case 'any':
      return true;
    case 'family':
      return e.family === 6 ? c.ipVersion[i] === 6 : c.ipVersion[i] !== 6;
    case 'address':
      return directed(e.direction, (s) => e.nets.some((n) => inNet(addr(s), i, n)));
    case 'exporter':
      return e.nets.some((n) => inNet(b.exporter, i, n));
    case 'nextHop':
      return e.nets.some((n) => inNet(b.nextHop, i, n));
    case 'port':
      return directed(e.direction, (s) => testNumber((s === 'src' ? c.srcPort : c.dstPort)[i]!, e.test));
    case 'as':
      return directed(e.direction, (s) => {
        const own = (s === 'src' ? c.srcAs : c.dstAs)[i]!;
        return testNumber(own === 0 && env.geo ? env.geo.asOf(addr(s), i) : own, e.test);
      });
    case 'country':
      return directed(
        e.direction,
        (s) => env.geo!.countryOf(addr(s), i) === ((e.code.charCodeAt(0) << 8) | e.code.charCodeAt(1)),
      );
    case 'proto':
      return c.proto[i] === e.value;
    case 'flags':
      // nfdump: all of the flags, but any of them under an odd number of nots (see flagsTest).
      return c.proto[i] === 6 && (negated ? (c.tcpFlags[i]! & e.mask) !== 0 : (c.tcpFlags[i]! & e.mask) === e.mask);
    case 'flagsValue':
      return c.proto[i] === 6 && testNumber(c.tcpFlags[i]!, e.test);
    case 'bytes':
      return testNumber(c.bytes[i]!, e.test);
    case 'packets':
      return testNumber(c.packets[i]!, e.test);
    case 'tos':
      return testNumber(c.tos[i]!, e.test);
    case 'interface':
      return e.side === 'in'
        ? c.inputIf[i] === e.value
        : e.side === 'out'
          ? c.outputIf[i] === e.value
          : c.inputIf[i] === e.value || c.outputIf[i] === e.value;
  }
}

/** A fake GeoLookup: AS and country from the address's last byte. */
const fakeGeo: GeoLookup = {
  asOf: (col, row) => 64500 + (col[row * 16 + 15]! % 4),
  countryOf: (col, row) => (col[row * 16 + 15]! % 2 === 0 ? (0x44 << 8) | 0x45 : (0x46 << 8) | 0x52), // DE, FR
};

const V4 = ['10.0.0.1', '10.0.0.2', '10.1.2.3', '192.168.1.9', '0.0.0.0'];
const V6 = ['2001:db8::1', '2001:db8:0:1::2', 'fe80::1', '::'];

function v6Bytes(text: string): Uint8Array {
  const e = parseFilter(`ip ${text}`) as unknown as { nets: IpNet[] };
  const out = new Uint8Array(16);
  const v = new DataView(out.buffer);
  e.nets[0]!.words.forEach((w, j) => v.setUint32(j * 4, w));
  return out;
}

/** A batch whose values come from small sets, so that random filters match some rows and not others. */
function randomBatch(rnd: () => number, rows: number): FlowBatch {
  const b = new FlowBatch(rows);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  // Blocks often hold one value in a column: make that happen too, so 'all' verdicts get tested.
  const constant = new Set(NUMERIC_COLUMNS.filter(() => rnd() < 0.3));
  const first: Record<string, number> = {};
  const val = (name: string, gen: () => number): number => {
    if (!constant.has(name as never)) return gen();
    first[name] ??= gen();
    return first[name];
  };
  for (let r = 0; r < rows; r++) {
    const i = b.addRow();
    const c = b.cols;
    const six = val('ipVersion', () => (rnd() < 0.3 ? 6 : 4)) === 6;
    c.ipVersion[i] = six ? 6 : 4;
    for (const col of ['srcAddr', 'dstAddr', 'exporter', 'nextHop'] as const) {
      if (six && col !== 'exporter') b.setV6(col, i, v6Bytes(pick(V6)), 0);
      else {
        const [a, bb, cc, d] = pick(V4).split('.').map(Number) as [number, number, number, number];
        b.setV4(col, i, ((a << 24) | (bb << 16) | (cc << 8) | d) >>> 0);
      }
    }
    c.srcPort[i] = val('srcPort', () => pick([0, 22, 53, 80, 443, 1024, 1025, 65535]));
    c.dstPort[i] = val('dstPort', () => pick([0, 22, 53, 80, 443, 1024, 1025, 65535]));
    c.proto[i] = val('proto', () => pick([1, 6, 6, 17, 47, 58]));
    c.tcpFlags[i] = val('tcpFlags', () => Math.floor(rnd() * 64));
    c.tos[i] = val('tos', () => pick([0, 0, 32, 184, 255]));
    c.bytes[i] = val('bytes', () => pick([0, 40, 999, 1000, 1001, 1e6, 2 ** 53]));
    c.packets[i] = val('packets', () => pick([0, 1, 2, 10, 1000]));
    c.inputIf[i] = val('inputIf', () => pick([0, 1, 2, 70000]));
    c.outputIf[i] = val('outputIf', () => pick([0, 1, 2, 70000]));
    c.srcAs[i] = val('srcAs', () => pick([0, 0, 64500, 64501, 4294967295]));
    c.dstAs[i] = val('dstAs', () => pick([0, 64502, 64503]));
  }
  return b;
}

const PRIMITIVES = [
  'any',
  'inet',
  'inet6',
  'src ip 10.0.0.1',
  'dst host 2001:db8::1',
  'ip 0.0.0.0',
  'ip ::',
  'net 10.0/16',
  'src net 10.0.0.0 255.0.255.0',
  'dst net 2001:db8::/32',
  'src and dst net 10.0.0.0/8',
  'ip in [ 192.168.1.9 fe80::/10 ]',
  'exporter 10.0.0.2',
  'router ip 192.168.1.0',
  'next ip 10.1.2.3',
  'port 80',
  'src port > 1024',
  'dst port <= 53',
  'src or dst port in [ 22 443 ]',
  'port in [ 1 2 3 4 5 6 7 8 22 ]',
  'src port ge 1025',
  'dst port lt 1',
  'proto tcp',
  'proto 58',
  'flags S',
  'flags SA',
  'flags X',
  'flags 18',
  'flags > 31',
  'bytes > 1k',
  'bytes >= 1000',
  'bytes 0',
  'bytes < 1m',
  'packets > 1',
  'packets = 0',
  'tos 0',
  'tos > 100',
  'in if 1',
  'out if 70000',
  'if 2',
  'src as 64500',
  'dst as > 64502',
  'as in [ 64501 64503 ]',
  'as in [ 1 2 3 4 5 6 7 8 64502 ]',
];

function randomExpr(rnd: () => number, depth: number, prims: readonly string[]): string {
  const r = rnd();
  if (depth === 0 || r < 0.4) return prims[Math.floor(rnd() * prims.length)]!;
  if (r < 0.55) return `not ${randomExpr(rnd, depth - 1, prims)}`;
  const join = r < 0.8 ? ' and ' : ' or ';
  return `(${randomExpr(rnd, depth - 1, prims)}${join}${randomExpr(rnd, depth - 1, prims)})`;
}

function selectAll(f: CompiledFilter, b: FlowBatch, from = 0, to = b.length): number[] {
  const out = new Uint32Array(Math.max(0, to - from));
  const n = f.select(b, from, to, out);
  return [...out.subarray(0, n)];
}

describe('compileFilter: select', () => {
  it('selects what a row-at-a-time reading of the tree selects (random filters over random batches, with and without geo)', () => {
    const rnd = xorshift(7);
    for (let round = 0; round < 300; round++) {
      const env: FilterEnv = round % 2 === 0 ? { geo: fakeGeo } : {};
      const prims = env.geo ? [...PRIMITIVES, 'src country DE', 'dst geo FR', 'country de'] : PRIMITIVES;
      const text = randomExpr(rnd, 4, prims);
      const expr = parseFilter(text);
      const f = compileFilter(expr, env);
      const b = randomBatch(rnd, 1 + Math.floor(rnd() * 200));
      const from = Math.floor(rnd() * 5);
      const expected: number[] = [];
      for (let i = from; i < b.length; i++) if (matches(expr, b, i, env)) expected.push(i);
      expect(selectAll(f, b, from), text).toEqual(expected);
    }
  });

  it('each primitive alone, on one batch', () => {
    const rnd = xorshift(99);
    const b = randomBatch(rnd, 500);
    for (const text of PRIMITIVES) {
      const expr = parseFilter(text);
      const expected: number[] = [];
      for (let i = 0; i < b.length; i++) if (matches(expr, b, i, {})) expected.push(i);
      expect(selectAll(compileFilter(expr), b), text).toEqual(expected);
    }
  });

  it('an IPv4 filter address matches IPv4-mapped rows only; an IPv6 prefix never matches them', () => {
    const b = new FlowBatch(4);
    b.setV4('srcAddr', b.addRow(), 0x0a000001);
    b.setV6('srcAddr', b.addRow(), v6Bytes('::a00:1'), 0);
    b.setV6('srcAddr', b.addRow(), v6Bytes('2001:db8::1'), 0);
    expect(selectAll(compileFilter(parseFilter('src ip 10.0.0.1')), b)).toEqual([0]);
    expect(selectAll(compileFilter(parseFilter('src ip ::ffff:10.0.0.1')), b)).toEqual([0]);
    expect(selectAll(compileFilter(parseFilter('src net 2001:db8::/32')), b)).toEqual([2]);
    expect(selectAll(compileFilter(parseFilter('src net ::/0')), b)).toEqual([0, 1, 2]);
  });

  it('src as uses the column, and the geo lookup only where the column is 0', () => {
    const b = new FlowBatch(2);
    const a = b.addRow();
    b.cols.srcAs[a] = 65000;
    b.setV4('srcAddr', a, 0x0a000001); // fake geo: 64501
    const z = b.addRow();
    b.setV4('srcAddr', z, 0x0a000001);
    expect(selectAll(compileFilter(parseFilter('src as 64501'), { geo: fakeGeo }), b)).toEqual([1]);
    expect(selectAll(compileFilter(parseFilter('src as 65000'), { geo: fakeGeo }), b)).toEqual([0]);
    expect(selectAll(compileFilter(parseFilter('src as 0')), b)).toEqual([1]);
    expect(selectAll(compileFilter(parseFilter('src as 0'), { geo: fakeGeo }), b)).toEqual([]);
  });

  it('country needs geo data: compiling it without is a FilterCompileError naming it', () => {
    const expr = parseFilter('proto tcp and src country DE');
    expect(() => compileFilter(expr)).toThrow(FilterCompileError);
    expect(() => compileFilter(expr)).toThrow(/'country DE' needs geo data/);
    try {
      compileFilter(expr);
    } catch (err) {
      expect(err).toMatchObject({ name: 'FilterCompileError', at: 14 });
    }
  });

  it("nfdump's flags: all listed flags set; under not, none of them (`flags S and not flags AFRPU` is only SYN)", () => {
    const b = new FlowBatch(8);
    for (const [proto, flags] of [
      [6, 0x02],
      [6, 0x12],
      [6, 0x18],
      [6, 0x10],
      [17, 0],
    ] as const) {
      const i = b.addRow();
      b.cols.proto[i] = proto;
      b.cols.tcpFlags[i] = flags;
    }
    const sel = (text: string): number[] => selectAll(compileFilter(parseFilter(text)), b);
    expect(sel('flags S and not flags AFRPU')).toEqual([0]);
    expect(sel('flags AP')).toEqual([2]);
    expect(sel('not flags AP')).toEqual([0, 4]);
    expect(sel('not not flags AP')).toEqual([2]);
    expect(sel('not (flags AP or proto udp)')).toEqual([0]);
    expect(sel('not flags 16')).toEqual([0, 1, 2, 4]); // a number is a plain comparison
  });

  it('names the columns it reads', () => {
    expect(new Set(compileFilter(parseFilter('src ip 10.0.0.1 and dst port 80')).columns)).toEqual(
      new Set(['srcAddr', 'dstPort']),
    );
    expect(new Set(compileFilter(parseFilter('flags S or inet6')).columns)).toEqual(new Set(['proto', 'tcpFlags', 'ipVersion']));
    expect(new Set(compileFilter(parseFilter('as 5'), { geo: fakeGeo }).columns)).toEqual(
      new Set(['srcAs', 'dstAs', 'srcAddr', 'dstAddr']),
    );
    expect(compileFilter(parseFilter('any')).columns).toEqual([]);
  });

  it('stays inside [from, to) and the batch, and refuses an out array too small', () => {
    const b = randomBatch(xorshift(3), 50);
    const f = compileFilter(parseFilter('any'));
    expect(selectAll(f, b, 10, 20)).toEqual(Array.from({ length: 10 }, (_, k) => 10 + k));
    const out = new Uint32Array(100);
    expect(f.select(b, 40, 100, out)).toBe(10);
    expect(() => f.select(b, 0, 50, new Uint32Array(10))).toThrow(RangeError);
  });

  it('values reach the generated code as data: a hostile-looking expression is only a syntax error', () => {
    expect(() => parseFilter("port 80'); process.exit(1); ('")).toThrow();
    expect(() => parseFilter('src country `${process.exit(1)}`')).toThrow();
  });
});

describe('compileFilter: countPlain', () => {
  /** The filter's columns of `b`, encoded as a data block and taken back as stored. */
  function stored(b: FlowBatch, f: CompiledFilter): { plain: Map<ColumnName, PlainColumn> | undefined; decoded: FlowBatch } {
    const { block } = encodeBlock(b, 0, b.length, createCodec('zstd', 3));
    const payload = block.subarray(BLOCK_HEADER_SIZE);
    const { index, columns } = decodeBlockMeta(payload, payload.length);
    const codecs = new CodecSet();
    const decoded = new FlowBatch(index.rows);
    decoded.length = index.rows;
    decodeBlockColumns(payload, columns, index.rows, new Set(f.columns), codecs, decoded, 0);
    return { plain: plainBlockColumns(payload, columns, index.rows, f.columns, codecs), decoded };
  }

  it('counts what select selects, from the columns as stored; filters on addresses or geo data decline', () => {
    const rnd = xorshift(31);
    let counted = 0;
    for (let round = 0; round < 300; round++) {
      const env: FilterEnv = round % 3 === 0 ? { geo: fakeGeo } : {};
      const text = randomExpr(rnd, 3, PRIMITIVES);
      const expr = parseFilter(text);
      const f = compileFilter(expr, env);
      const b = randomBatch(rnd, 1 + Math.floor(rnd() * 300));
      const { plain, decoded } = stored(b, f);
      const expected = selectAll(f, decoded).length;
      expect(expected, text).toBe(selectAll(f, b).length);
      const readsAddresses = f.columns.some((c) => ['srcAddr', 'dstAddr', 'exporter', 'nextHop'].includes(c));
      const got = plain ? f.countPlain?.(plain, decoded.length) : undefined;
      if (readsAddresses) {
        expect(plain, text).toBeUndefined();
        expect(f.countPlain, text).toBeUndefined();
      } else {
        expect(f.countPlain, text).toBeDefined();
        // bytes take their raw float64 form when a value is 2^53 (no frame of reference fits): the caller decodes.
        if (got === undefined)
          expect(f.columns, text).toSatisfy((c: ColumnName[]) => c.includes('bytes') || c.includes('packets'));
        else {
          expect(got, text).toBe(expected);
          counted++;
        }
      }
    }
    expect(counted).toBeGreaterThan(100);
  });

  it('reads a stored value as decoding writes it into its column: an integer column keeps the low bits of base + value', () => {
    const rnd = xorshift(5);
    // [filter, its column, the value an equality tests (a quarter of the rows are stored to hit it after the wrap)]
    const cases: [string, NumericColumn, number?][] = [
      ['dst port 4', 'dstPort', 4],
      ['proto 6', 'proto', 6],
      ['in if 7', 'inputIf', 7],
      ['src as > 70000', 'srcAs'],
      ['bytes > 65536', 'bytes'],
    ];
    let hits = 0;
    for (const [text, column, tested] of cases) {
      const f = compileFilter(parseFilter(text));
      const bits = COLUMN_TYPES[column].BYTES_PER_ELEMENT * 8;
      for (const width of [0, 1, 2, 4] as const) {
        for (const base of [0, 3, 250, 65_530, 4_294_967_290, 2 ** 40, -2]) {
          const rows = 257;
          const raw = tested === undefined || bits === 64 ? -1 : (((tested - base) % 2 ** bits) + 2 ** bits) % 2 ** bits;
          const bytes = new Uint8Array(width === 0 ? new Float64Array([base]).buffer : new ArrayBuffer(rows * width));
          for (let i = 0; width > 0 && i < rows; i++) {
            const v = raw >= 0 && raw < 2 ** (8 * width) && rnd() < 0.25 ? raw : Math.floor(rnd() * 2 ** (8 * width));
            for (let k = 0; k < width; k++) bytes[k * rows + i] = Math.floor(v / 2 ** (8 * k)) % 256;
          }
          const entry = { transform: width === 0 ? TRANSFORM.const : TRANSFORM.int, width, base };
          const b = new FlowBatch(rows);
          b.length = rows;
          decodeNumeric(entry, bytes, rows, b.cols[column] as NumericArray);
          hits += selectAll(f, b).length > 0 ? 1 : 0;
          const plain = new Map<ColumnName, PlainColumn>([[column, { width, base, bytes }]]);
          expect(f.countPlain!(plain, rows), `${text}, width ${width}, base ${base}, ${COLUMN_TYPES[column].name}`).toBe(
            selectAll(f, b).length,
          );
        }
      }
    }
    expect(hits).toBeGreaterThan(60);
  });
});

describe('compileFilter: block', () => {
  it("never says 'none' for a block with a matching row, nor 'all' for one with a row that does not match", () => {
    const rnd = xorshift(2026);
    let none = 0;
    let all = 0;
    for (let round = 0; round < 2000; round++) {
      const env: FilterEnv = round % 3 === 0 ? { geo: fakeGeo } : {};
      const text = randomExpr(rnd, 3, PRIMITIVES);
      const f = compileFilter(parseFilter(text), env);
      const b = randomBatch(rnd, 1 + Math.floor(rnd() * 30));
      const n = selectAll(f, b).length;
      const v = f.block(realStats(b));
      if (v === 'none') {
        none++;
        expect(n, `${text}: 'none' but ${n} rows match`).toBe(0);
      }
      if (v === 'all') {
        all++;
        expect(n, `${text}: 'all' but ${n} of ${b.length} rows match`).toBe(b.length);
      }
    }
    // The property means little unless both verdicts happen often.
    expect(none).toBeGreaterThan(100);
    expect(all).toBeGreaterThan(100);
  });

  it('uses ranges: ports, protocol, counters, interfaces, flags; unknown columns and addresses say some', () => {
    const stats =
      (r: Partial<Record<ColumnName, [number, number]>>): BlockStats =>
      (c) => {
        const x = r[c];
        return x && { min: x[0], max: x[1] };
      };
    const v = (text: string, s: BlockStats, env: FilterEnv = {}): string => compileFilter(parseFilter(text), env).block(s);
    expect(v('dst port 80', stats({ dstPort: [443, 443] }))).toBe('none');
    expect(v('dst port 80', stats({ dstPort: [80, 80] }))).toBe('all');
    expect(v('dst port 80', stats({ dstPort: [1, 1000] }))).toBe('some');
    expect(v('dst port 80', stats({}))).toBe('some');
    expect(v('not dst port 80', stats({ dstPort: [443, 443] }))).toBe('all');
    expect(v('port 80', stats({ srcPort: [1, 10], dstPort: [80, 80] }))).toBe('all');
    expect(v('proto tcp and bytes > 1k', stats({ proto: [17, 17], bytes: [0, 1e9] }))).toBe('none');
    expect(v('bytes > 1k', stats({ bytes: [2000, 5000] }))).toBe('some'); // float column: never 'all'
    expect(v('bytes > 1k', stats({ bytes: [0, 1000] }))).toBe('none');
    expect(v('flags S', stats({ proto: [6, 6], tcpFlags: [0, 1] }))).toBe('none');
    expect(v('flags S', stats({ proto: [6, 6], tcpFlags: [2, 2] }))).toBe('all');
    expect(v('in if 3', stats({ inputIf: [4, 9] }))).toBe('none');
    expect(v('src ip 10.0.0.1', stats({ srcAddr: [0, 0] }))).toBe('some');
    expect(v('src ip 10.0.0.1 and proto 50', stats({ proto: [6, 17] }))).toBe('none');
    expect(v('inet6', stats({ ipVersion: [4, 4] }))).toBe('none');
    expect(v('inet', stats({ ipVersion: [4, 4] }))).toBe('all');
    expect(v('src as 5', stats({ srcAs: [0, 3] }), { geo: fakeGeo })).toBe('some');
    expect(v('src as 5', stats({ srcAs: [1, 3] }), { geo: fakeGeo })).toBe('none');
    expect(v('src as 5', stats({ srcAs: [0, 3] }))).toBe('none');
  });

  it('directoryStats: numeric entries by column id; address entries (IPv4/other row counts) and unknown ids ignored', () => {
    const entry = (id: number, min: number, max: number) =>
      ({ id, transform: 1, width: 1, codec: 0, rawLen: 0, storedLen: 0, crc: 0, base: 0, min, max, offset: 0 }) as const;
    const stats = directoryStats([entry(6, 80, 80), entry(16, 3, 5), entry(200, 1, 1)]);
    expect(stats('dstPort')).toEqual({ min: 80, max: 80 });
    expect(stats('srcAddr')).toBeUndefined();
    expect(stats('srcPort')).toBeUndefined();
    expect(compileFilter(parseFilter('dst port 443 or src ip 10.0.0.1')).block(stats)).toBe('some');
    expect(compileFilter(parseFilter('dst port 443 and src ip 10.0.0.1')).block(stats)).toBe('none');
  });
});
