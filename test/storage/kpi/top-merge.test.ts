import { describe, expect, it } from 'vitest';
import { BYTES, FLOWS, KeyTable, type Metric } from '../../../storage/kpi/key-table.js';
import { keyTableSource } from '../../../storage/kpi/hour-aggregate.js';
import { cutLevels } from '../../../storage/kpi/levels.js';
import { levelsSource, mergeTop, type MergeStats } from '../../../storage/kpi/top-merge.js';

/** A small deterministic PRNG so a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

function keyOf(id: number): Uint8Array {
  const k = new Uint8Array(16);
  k[10] = 0xff;
  k[11] = 0xff;
  new DataView(k.buffer).setUint32(12, id);
  return k;
}

type Hour = Map<number, [number, number, number]>;

/** Hours of per-key counters with a chosen shape of the distribution. */
function makeHours(seed: number, hours: number, keys: number, shape: 'zipf' | 'flat' | 'ties'): Hour[] {
  const r = rng(seed);
  return Array.from({ length: hours }, () => {
    const h: Hour = new Map();
    const flows = keys * 3;
    for (let f = 0; f < flows; f++) {
      const id = shape === 'zipf' ? Math.floor(keys * r() ** 3) : Math.floor(keys * r());
      const bytes = shape === 'ties' ? 100 : 40 + Math.floor(r() * 1500);
      const e = h.get(id) ?? [0, 0, 0];
      e[0] += bytes;
      e[1] += 1 + Math.floor(bytes / 1000);
      e[2] += 1;
      h.set(id, e);
    }
    return h;
  });
}

function bruteTop(hours: Hour[], metric: Metric, n: number): Array<[number, number, number, number]> {
  const sum = new Map<number, [number, number, number]>();
  for (const h of hours)
    for (const [id, v] of h) {
      const e = sum.get(id) ?? [0, 0, 0];
      sum.set(id, [e[0] + v[0], e[1] + v[1], e[2] + v[2]]);
    }
  return [...sum]
    .sort((a, b) => b[1][metric] - a[1][metric] || a[0] - b[0])
    .slice(0, n)
    .map(([id, v]) => [id, ...v]);
}

function tableOf(h: Hour): KeyTable {
  const t = new KeyTable();
  for (const [id, v] of h) t.addKey(keyOf(id), 0, v[0], v[1], v[2]);
  return t;
}

function decode(rows: Awaited<ReturnType<typeof mergeTop>>): Array<[number, number, number, number]> {
  const out: Array<[number, number, number, number]> = [];
  for (let i = 0; i < rows.length; i++) {
    const id = new DataView(rows.keys.buffer, rows.keys.byteOffset + i * 16 + 12, 4).getUint32(0);
    out.push([id, rows.vals[i * 3]!, rows.vals[i * 3 + 1]!, rows.vals[i * 3 + 2]!]);
  }
  return out;
}

describe('exact top-N merge over hourly rankings', () => {
  for (const shape of ['zipf', 'flat', 'ties'] as const) {
    for (const metric of [BYTES, FLOWS] as Metric[]) {
      it(`equals a full recount (${shape} keys, by ${metric === BYTES ? 'bytes' : 'flows'})`, async () => {
        for (let seed = 1; seed <= 4; seed++) {
          const hours = makeHours(seed * 31 + metric, 1 + (seed % 4) * 5, 300 + seed * 400, shape);
          const stats: MergeStats = { rounds: 0, rowsRead: 0 };
          const sources = hours.map((h) => keyTableSource(tableOf(h), metric));
          expect(decode(await mergeTop(sources, metric, 10, 16, stats))).toEqual(bruteTop(hours, metric, 10));
          // The same through fully ranked rows (what the cache stores).
          const ranked = hours.map((h) => levelsSource(cutLevels(tableOf(h).rows(), metric)));
          expect(decode(await mergeTop(ranked, metric, 10, 16))).toEqual(bruteTop(hours, metric, 10));
        }
      });
    }
  }

  it('reads only the first level when the traffic is skewed', async () => {
    const hours = makeHours(7, 24, 5000, 'zipf');
    const stats: MergeStats = { rounds: 0, rowsRead: 0 };
    const sources = hours.map((h) => keyTableSource(tableOf(h), BYTES));
    expect(decode(await mergeTop(sources, BYTES, 10, 16, stats))).toEqual(bruteTop(hours, BYTES, 10));
    expect(stats.rounds).toBe(1);
    expect(stats.rowsRead).toBe(24 * 256);
  });

  it('returns fewer than N keys when there are fewer', async () => {
    const hours = makeHours(3, 2, 4, 'flat');
    const sources = hours.map((h) => keyTableSource(tableOf(h), BYTES));
    expect(decode(await mergeTop(sources, BYTES, 10, 16))).toEqual(bruteTop(hours, BYTES, 10));
    expect((await mergeTop([], BYTES, 10, 16)).length).toBe(0);
  });
});
