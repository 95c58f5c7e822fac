import { describe, expect, it } from 'vitest';
import { FlowBatch } from '../../../common/flow-batch.js';
import { compileFilter, type CompiledFilter } from '../../../storage/flow-query/filter-compile.js';
import { parseFilter } from '../../../storage/flow-query/filter-parse.js';
import { bisectionHelps, keysOnly, sortedRanges, type SortedRanges } from '../../../storage/flow-query/sorted-ranges.js';
import { xorshift } from '../../helpers/xorshift.js';
import { realStats } from './block-stats.js';

/** A block of `n` rows ordered by protocol then destination port, with `ports` distinct ports drawn per protocol. */
function orderedBlock(n: number, ports: number, seed: number): FlowBatch {
  const r = xorshift(seed);
  const b = new FlowBatch(n);
  const protos = [1, 6, 17, 47];
  const pool = Array.from({ length: ports }, (_, k) => (k < 4 ? [22, 53, 80, 443][k]! : Math.floor(r() * 65536)));
  const keys: number[] = [];
  for (let i = 0; i < n; i++) keys.push(protos[Math.floor(r() * protos.length)]! * 65536 + pool[Math.floor(r() * pool.length)]!);
  keys.sort((x, y) => x - y);
  for (const k of keys) {
    const i = b.addRow();
    b.cols.proto[i] = Math.floor(k / 65536);
    b.cols.dstPort[i] = k % 65536;
    b.cols.bytes[i] = 100 + Math.floor(r() * 10_000);
    b.cols.tos[i] = Math.floor(r() * 4) * 8;
  }
  return b;
}

/** The ranges of a block ordered by protocol and port that filter `f` may match (keysOnly as the scan passes it, unless given). */
function rangesOf(b: FlowBatch, f: CompiledFilter, keys = keysOnly(f.columns)): SortedRanges | undefined {
  return sortedRanges(
    b.length,
    (i) => b.cols.proto[i]!,
    (i) => b.cols.dstPort[i]!,
    realStats(b),
    f.block,
    undefined,
    keys,
    f.columns.includes('dstPort'),
  );
}

/** A result's ranges as [from…, to…, whole…]. */
function flat(r: SortedRanges | undefined): number[] | undefined {
  return r && [...r.from.subarray(0, r.count), ...r.to.subarray(0, r.count), ...r.whole.subarray(0, r.count)];
}

describe('sortedRanges', () => {
  const texts = [
    'dst port 443',
    'proto udp',
    'proto udp and dst port 53',
    'not dst port 80',
    'dst port < 1024 or proto 47',
    'dst port 443 and bytes > 5000',
    'proto tcp and not tos 8',
    'dst port in [22 53]',
  ];

  it('drops only rows that cannot match and takes whole only rows that all match, for many blocks and filters', () => {
    for (let seed = 1; seed <= 6; seed++) {
      // Blocks as sealing writes them: up to 65 536 rows (fewer in the last block of an hour).
      const b = orderedBlock(16_384 + seed * 3001, seed % 3 === 0 ? 40 : 6, seed);
      const out = new Uint32Array(b.length);
      for (const text of texts) {
        const f = compileFilter(parseFilter(text));
        expect(bisectionHelps(f.columns), text).toBe(true);
        const matched = new Set(out.subarray(0, f.select(b, 0, b.length, out)));
        const r = rangesOf(b, f);
        expect(r, text).toBeDefined();
        // Per row: 0 outside every range, 1 in a range to test, 2 in a range taken whole.
        const cover = new Uint8Array(b.length);
        let ascending = true;
        for (let k = 0; k < r!.count; k++) {
          if (k > 0 && r!.from[k]! < r!.to[k - 1]!) ascending = false;
          cover.fill(r!.whole[k] ? 2 : 1, r!.from[k]!, r!.to[k]!);
        }
        expect(ascending, text).toBe(true);
        const dropped = [...matched].filter((i) => cover[i] === 0);
        const wrongWhole = [...cover.keys()].filter((i) => cover[i] === 2 && !matched.has(i));
        expect({ dropped, wrongWhole }, text).toEqual({ dropped: [], wrongWhole: [] });
        // Port and protocol filters leave no row to test one by one.
        if (keysOnly(f.columns)) {
          let tested = 0;
          for (let k = 0; k < r!.count; k++) if (!r!.whole[k]) tested += r!.to[k]! - r!.from[k]!;
          expect(tested, text).toBe(0);
        }
      }
    }
  });

  it('tells rows of one port apart by protocol in a short range, where the port spans two protocols', () => {
    const b = new FlowBatch(15);
    for (let i = 0; i < 15; i++) {
      b.addRow();
      b.cols.proto[i] = i < 5 ? 6 : 17;
      b.cols.dstPort[i] = 53;
    }
    for (const [text, from, to] of [
      ['proto udp', 5, 15],
      ['proto tcp and dst port 53', 0, 5],
    ] as const) {
      const f = compileFilter(parseFilter(text));
      const r = rangesOf(b, f, true);
      expect(flat(r), text).toEqual([from, to, 1]);
    }
  });

  it('answers blocks of no row and of one row', () => {
    const f = compileFilter(parseFilter('dst port 443'));
    const none = sortedRanges(
      0,
      () => 0,
      () => 0,
      () => undefined,
      f.block,
      undefined,
      true,
    );
    expect(none?.count).toBe(0);
    for (const [port, want] of [
      [443, [0, 1, 1]],
      [80, []],
    ] as const) {
      const b = new FlowBatch(1);
      b.addRow();
      b.cols.proto[0] = 6;
      b.cols.dstPort[0] = port;
      expect(flat(rangesOf(b, f))).toEqual(want);
    }
  });

  it('gives up too when deciding the last rows of ranges one port at a time would ask too many verdicts', () => {
    // 64 rows, each its own port: two halves of 32 undecided by 'dst port in [0 13 … 52]', then a
    // verdict per row, 67 in all, over the 64 a block may ask.
    const b = new FlowBatch(64);
    for (let i = 0; i < 64; i++) {
      b.addRow();
      b.cols.proto[i] = 6;
      b.cols.dstPort[i] = i;
    }
    const f = compileFilter(parseFilter('dst port in [0 13 26 39 52]'));
    expect(keysOnly(f.columns)).toBe(true);
    expect(rangesOf(b, f, true)).toBeUndefined();
  });

  it('gives up (the caller tests every row) when the filter cuts a block into too many pieces', () => {
    // Every row its own port: ToS is not ordered, so 'tos 8' leaves every piece of 32 rows to test.
    const b = new FlowBatch(4096);
    for (let i = 0; i < 4096; i++) {
      b.addRow();
      b.cols.proto[i] = 6;
      b.cols.dstPort[i] = i * 2;
      b.cols.tos[i] = (i % 4) * 8;
    }
    const f = compileFilter(parseFilter('dst port > 0 and tos 8'));
    expect(rangesOf(b, f)).toBeUndefined();
  });
});
