import { describe, expect, it } from 'vitest';
import { BYTES, FLOWS, compareKeys, type Metric, type RankedRows } from '../../../storage/kpi/key-table.js';
import { cutLevels } from '../../../storage/kpi/levels.js';
import { LEVEL_ENDS } from '../../../storage/kpi/top-merge.js';

function rowsOf(n: number, value: (i: number) => number, metric: Metric): RankedRows {
  const rows: RankedRows = { keyWidth: 4, length: n, keys: new Uint8Array(n * 4), vals: new Float64Array(n * 3) };
  for (let i = 0; i < n; i++) {
    // Keys in a scrambled order so key order and input order differ.
    new DataView(rows.keys.buffer).setUint32(i * 4, Math.imul(i + 1, 0x9e3779b1) >>> 0);
    rows.vals[i * 3 + metric] = value(i);
    rows.vals[i * 3 + (metric === BYTES ? FLOWS : BYTES)] = i;
  }
  return rows;
}

function keysOf(rows: RankedRows): string[] {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i++) out.push(Buffer.from(rows.keys.subarray(i * 4, i * 4 + 4)).toString('hex'));
  return out;
}

/** The reference: a full sort by metric descending, then key ascending. */
function fullSort(rows: RankedRows, metric: Metric): string[] {
  const idx = Array.from({ length: rows.length }, (_, i) => i);
  idx.sort(
    (x, y) => rows.vals[y * 3 + metric]! - rows.vals[x * 3 + metric]! || compareKeys(rows.keys, x * 4, rows.keys, y * 4, 4),
  );
  return idx.map((i) => Buffer.from(rows.keys.subarray(i * 4, i * 4 + 4)).toString('hex'));
}

describe('cutLevels', () => {
  const cases: Array<[string, number, (i: number) => number]> = [
    ['distinct values', 70_000, (i) => (i * 7919) % 100_003],
    ['heavy ties across every boundary', 70_000, (i) => 1000 - Math.floor(Math.log2(1 + (i % 5000)))],
    ['all equal', 5000, () => 40],
    ['fewer rows than a level', 100, (i) => i % 7],
  ];
  for (const [name, n, value] of cases) {
    it(`puts each row in the level of its rank (${name})`, () => {
      for (const metric of [BYTES, FLOWS] as Metric[]) {
        const rows = rowsOf(n, value, metric);
        const order = fullSort(rows, metric);
        const levels = cutLevels(rows, metric);
        let from = 0;
        levels.forEach((level, k) => {
          const to = Math.min(LEVEL_ENDS[k]!, n);
          expect(new Set(keysOf(level.rows))).toEqual(new Set(order.slice(from, to)));
          const nextRow = order[to];
          expect(level.next).toBe(nextRow === undefined ? 0 : rows.vals[keysOf(rows).indexOf(nextRow) * 3 + metric]);
          from = to;
        });
        expect(from).toBe(n);
        // Level 0 comes out in rank order.
        expect(keysOf(levels[0]!.rows)).toEqual(order.slice(0, Math.min(256, n)));
      }
    });
  }
});
